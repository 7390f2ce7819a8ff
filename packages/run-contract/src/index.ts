/**
 * @overseer/run-contract — what crosses the wire between the coordinator, the queue, the worker,
 * the harness and the agent: the run job and its results, the control file an agent ends its run
 * with, the sandbox a run asks for and the egress host rules. Schemas only (zod): no transport,
 * no I/O; every side validates with these.
 */
export {
  type ApproveTransition,
  CONTROL_KINDS,
  CONTROL_LIMITS,
  type CompleteTransition,
  type ControlKind,
  type ControlParseResult,
  type ControlTransition,
  ControlTransitionSchema,
  type DecisionOption,
  ESCALATION_CATEGORIES,
  type EscalateTransition,
  type EscalationCategory,
  normalizeOptionId,
  type PlanTransition,
  parseControlTransition,
  type RejectTransition,
  type SubmitTransition,
  TRANSITION_FILE_NAME,
  type Usage,
  UsageSchema,
} from "./control-file-schema.ts";
export { EGRESS_DEFAULTS } from "./egress-defaults.ts";
export {
  type Cidr,
  cidrContains,
  EGRESS_HOST_EXPECTED,
  type EgressHostRule,
  egressHostRuleSchema,
  egressRuleMatches,
  formatEgressHostRule,
  parseCidr,
  parseEgressHostRule,
  parseEgressHostRules,
} from "./egress-host-rule.ts";
export {
  FORGE_JOB_VERSION,
  type ForgeJob,
  type ForgeJobKind,
  forgeJobSchema,
} from "./forge-job-schema.ts";
export {
  type ImageReference,
  imageReferenceSchema,
  parseImageReference,
} from "./image-reference.ts";
export { type RunEnvironment, runEnvironmentSchema } from "./run-environment-schema.ts";
export {
  hookSchema,
  jobLandingBranch,
  landingFailureSchema,
  type QueuedRun,
  queuedRunSchema,
  type ResultMessage,
  RUN_JOB_VERSION,
  type RunById,
  type RunJob,
  type RunOutcome,
  type RunQueuePayload,
  type RunRef,
  type RunResult,
  type RunStarted,
  type RunTranscript,
  type RunUsage,
  type RunUsageMessage,
  resultMessageSchema,
  runByIdSchema,
  runJobSchema,
  runOutcomeSchema,
  runQueuePayloadSchema,
  runRefOf,
  runRefSchema,
  runResultSchema,
  runStartedSchema,
  runTranscriptSchema,
  runUsageMessageSchema,
} from "./run-job-schema.ts";
export {
  RUN_PHASES,
  type RunPhase,
  type RunPhaseName,
  runPhaseSchema,
  timelineEnd,
  traceparentSchema,
} from "./run-phases.ts";
export { DEFAULT_SANDBOX_LIMITS } from "./sandbox-limits.ts";
export {
  type RunSandbox,
  runSandboxSchema,
  SANDBOX_DRIVER_NAMES,
  type SandboxDriverName,
} from "./sandbox-request-schema.ts";
export { DEFAULT_POOL, isPoolName, POOL_NAME_EXPECTED, poolNameSchema } from "./worker-pool.ts";
