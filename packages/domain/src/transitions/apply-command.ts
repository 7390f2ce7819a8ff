/**
 * The task state machine (docs/state-machine.md) as one pure function:
 *
 *   applyCommand(state, command, ctx) → { state', changes, events, incidents }
 *
 * Nothing here performs I/O. Callers load a ProjectState, apply one command, and persist
 * `changes` in a single transaction (optimistic concurrency on each changed task's
 * version). Time and ids come from `ctx`, so every sequence is replayable in tests.
 *
 * Transitions at a glance (the handler's module in brackets):
 *
 *   claim            todo → in_progress (execute/resolve run queued); review → review run queued
 *                                                                           [claim-transitions]
 *   submit           in_progress → review                      (executor/resolver run)
 *   approve          review → done; a done resolver returns its original to todo/review;
 *                    in pull_request mode review → pr_open (its pull request asked for)
 *   reject           review → todo with the reviewer's feedback
 *   land-failed      review → todo: approved but a real conflict or a failed check kept it
 *                    from landing; the next executor integrates the main branch
 *   timeout          like escalate, reason = the timeout (rule 8)
 *   no-transition    retry with backoff up to maxAttempts, then escalate (rule 9)
 *   scope-violation  incident + awaiting_input resolver + project paused (rule 10)
 *   run-violation    incident + escalate (a forbidden transition or the disk limit; nothing landed)
 *   run-misconfigured awaiting_input with a card saying what to set
 *   (refused)        an outcome with the project's retry policy (`retry`, as the coordinator
 *                    sends a worker's result) that the machine refuses as an invalid transition
 *                    is the failed-run branch of no-transition, in the same command
 *                                                                     [run-outcome-transitions]
 *   pr-opened        records the forge's number and link of the approved head's pull request
 *   pr-checks        green recorded; red: pr_open → todo with the failing checks' log tails,
 *                    awaiting_input after `attempts` red rounds in a row
 *   pr-review        changes requested / unresolved threads / comments: pr_open → todo with
 *                    every one of them; else approvals recorded
 *   pr-merged        → done with the merge commit (by anyone); stacked pull requests retargeted
 *   pr-closed        closed unmerged → cancelled, or pr_open → todo (`on_closed`); pull requests
 *                    stacked on a cancelled one → awaiting_input (rule 20)
 *   pr-conflict      pr_open → todo with the conflict, as a failed landing (rule 3)
 *                    (reports about another head, or repeated ones, are already_applied)
 *                                                                   [pull-request-transitions]
 *   escalate         in_progress|review → blocked + resolver (todo, or awaiting_input at the
 *                    depth-3 / 6-remediation limits or when the agent needs the user)
 *                                                                      [escalation-transitions]
 *   operator         release-external, answer, resolve-decision, cancel, stop
 *                                                                        [decision-transitions]
 *   start-mission    active + continuous, planning task for the objective (mission.ts)
 *   propose          planning task in_progress → review with its plan or completion evidence
 *                    (after review: plan-approval.ts)                      [mission-transitions]
 *   start-project    active with a fresh session budget (rule 12), records project.started
 *   import-tasks     new todo tasks from a validated task file, all or none
 *   create-project   a new project (applyProjectCreation; against an existing one: already_exists)
 *   update-project-config  operator settings (runner config, objective, concurrency, budget)
 *   set-project-status     pause, stop (active runs cancelled) or resume
 *                                                                 [project-control-transitions]
 *
 * `awaiting_input` is left only through an operator command.
 */
import type { Command, CommandKind } from "../command.ts";
import type { DomainContext, ProjectState } from "../project-state.ts";
import type { ApplyResult } from "./apply-result.ts";
import { claim } from "./claim-transitions.ts";
import { answer, cancel, releaseExternal, resolveDecision, stop } from "./decision-transitions.ts";
import { Draft } from "./draft.ts";
import { escalate } from "./escalation-transitions.ts";
import type { CommandOf, Handler } from "./handler.ts";
import { propose, startMission } from "./mission-transitions.ts";
import {
  createProject,
  importTasks,
  setProjectStatus,
  startProject,
  updateProjectConfig,
} from "./project-control-transitions.ts";
import { prChecks, prClosed, prConflict, prMerged, prOpened, prReview } from "./pull-request-transitions.ts";
import {
  approve,
  landFailed,
  noTransition,
  refusedOutcomeAsFailedRun,
  reject,
  runMisconfigured,
  runStarted,
  runViolation,
  scopeViolation,
  submit,
  timeout,
} from "./run-outcome-transitions.ts";

/** One handler per command kind: a kind without one does not compile. */
const HANDLERS = {
  claim,
  "run-started": runStarted,
  submit,
  approve,
  reject,
  "land-failed": landFailed,
  escalate,
  timeout,
  "no-transition": noTransition,
  "run-misconfigured": runMisconfigured,
  "scope-violation": scopeViolation,
  "run-violation": runViolation,
  propose,
  "pr-opened": prOpened,
  "pr-checks": prChecks,
  "pr-review": prReview,
  "pr-merged": prMerged,
  "pr-closed": prClosed,
  "pr-conflict": prConflict,
  "release-external": releaseExternal,
  answer,
  "resolve-decision": resolveDecision,
  cancel,
  stop,
  "start-project": startProject,
  "import-tasks": importTasks,
  "start-mission": startMission,
  "create-project": createProject,
  "update-project-config": updateProjectConfig,
  "set-project-status": setProjectStatus,
} satisfies { [K in CommandKind]: Handler<K> };

export function applyCommand(state: ProjectState, command: Command, ctx: DomainContext): ApplyResult {
  try {
    return dispatch(new Draft(state, ctx), command);
  } catch (error) {
    // A worker's outcome the machine refuses is the run failing: decided here, in this command.
    const failed = refusedOutcomeAsFailedRun(command, error);
    if (failed === null) throw error;
    return dispatch(new Draft(state, ctx), failed);
  }
}

function dispatch<K extends CommandKind>(draft: Draft, command: CommandOf<K>): ApplyResult {
  return (HANDLERS[command.kind] as Handler<K>)(draft, command);
}
