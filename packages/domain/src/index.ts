export * from "./budget.ts";
export * from "./command.ts";
export * from "./decision.ts";
export * from "./domain-error.ts";
export * from "./domain-event.ts";
export * from "./mission.ts";
export * from "./mission-summary.ts";
export * from "./notification.ts";
export * from "./project-settings.ts";
export * from "./project-state.ts";
export * from "./pull-request.ts";
export * from "./run.ts";
export * from "./scheduler.ts";
export * from "./task.ts";
export * from "./task-card.ts";
export { applyCommand } from "./transitions/apply-command.ts";
export { type ApplyResult, type Changes, changesNothing } from "./transitions/apply-result.ts";
export { claimChangesNothing } from "./transitions/claim-transitions.ts";
export { MAX_REMEDIATIONS_PER_ROOT, MAX_RESOLVER_DEPTH } from "./transitions/escalation-transitions.ts";
export { LANDING_DETAILS_KEEP_CHARS } from "./transitions/landing-failure.ts";
export { applyProjectCreation } from "./transitions/project-control-transitions.ts";
export {
  pullRequestBase,
  RETARGET_OPTION_ID,
  stackedPrerequisite,
} from "./transitions/pull-request-stacks.ts";
export { checksFeedback, reviewFeedback } from "./transitions/pull-request-steps.ts";
