/**
 * Invariants of escalation: (b) blocked is left only when its own resolver is done, or by an
 * operator cancel/stop; (c) resolvers deeper than 3, or past the 6th remediation under a root,
 * are awaiting_input; a resolver carries its original's prerequisites (rule 4); a blocked task
 * names an open resolver.
 */
import { MAX_REMEDIATIONS_PER_ROOT, MAX_RESOLVER_DEPTH, type Task } from "../../../src/index.ts";
import { ensure, isStop, type Step, statusOf } from "./invariant-support.ts";

/** (b) for one task after the step. */
export function checkBlockedLeft(step: Step, after: Task, before: Task | undefined): void {
  const { prev, command, result, next, via } = step;
  // (b) blocked is left only through its own resolver's done, or operator cancel/stop.
  if (before?.status === "blocked" && after.status !== "blocked") {
    const viaResolver =
      ((command.kind === "approve" && prev.runs.get(command.runId)?.taskId === before.blockedBy) ||
        (command.kind === "pr-merged" && command.taskId === before.blockedBy)) &&
      statusOf(next, before.blockedBy) === "done";
    // A person merged or closed a pull request on the forge (rule 18): the task's own (done or
    // cancelled), a cancelled ancestor's, or its resolver's (closed: the original asks).
    const viaForge =
      (command.kind === "pr-merged" || command.kind === "pr-closed") &&
      (command.taskId === after.id || after.status === "cancelled" || command.taskId === before.blockedBy);
    // Cancelling a task also cancels its open resolver chain (no continuation), so a
    // blocked resolver may end `cancelled` when an ancestor is cancelled.
    const viaCancel =
      command.kind === "cancel" &&
      (command.taskId === after.id ||
        command.taskId === before.blockedBy ||
        (after.status === "cancelled" &&
          before.rootId === (prev.tasks.get(command.taskId)?.rootId ?? command.taskId)));
    ensure(
      viaResolver || viaCancel || viaForge || isStop(command, result),
      via(`${after.id} left blocked for ${after.status}`),
    );
    if (viaResolver)
      ensure(after.status === (before.returnTo ?? "todo"), via(`${after.id} unblocked to ${after.status}`));
    else
      ensure(
        after.status === "cancelled" ||
          after.status === "awaiting_input" ||
          (after.status === "done" && command.kind === "pr-merged" && command.taskId === after.id),
        via(`${after.id} → ${after.status}`),
      );
  }
}

/** (c) and rule 4 for a task the step created that is neither a planning round nor an import. */
export function checkCreatedResolver({ command, next, history, via }: Step, after: Task): void {
  // (c) limits: created resolvers past depth 3 or the 6th remediation wait for an operator.
  ensure(after.kind === "resolver", via(`created ${after.id} is not a resolver`));
  let remediation = 0;
  for (const t of next.tasks.values()) if (t.kind === "resolver" && t.rootId === after.rootId) remediation++;
  const overLimit = after.depth > MAX_RESOLVER_DEPTH || remediation > MAX_REMEDIATIONS_PER_ROOT;
  if (after.depth > 1) history.stats.nested++;
  if (overLimit) {
    history.stats.blockerLimit++;
    if (after.depth > MAX_RESOLVER_DEPTH) history.stats.depthLimit++;
    if (remediation > MAX_REMEDIATIONS_PER_ROOT) history.stats.remediationLimit++;
    ensure(
      after.status === "awaiting_input" &&
        after.awaitingReason === "blocker_limit" &&
        next.decisions.get(`decision-${after.id}`)?.status === "pending",
      via(
        `over-limit resolver ${after.id} (depth ${after.depth}, remediation ${remediation}) is ${after.status}`,
      ),
    );
  } else if (
    command.kind === "timeout" ||
    command.kind === "no-transition" ||
    (command.kind === "escalate" && !command.needsUser)
  ) {
    ensure(after.status === "todo", via(`resolver ${after.id} within limits is ${after.status}`));
  }
  // Rule 4: the resolver carries the original's prerequisites and does not depend on it.
  const parent = next.tasks.get(after.parentId ?? "");
  ensure(
    parent?.status === "blocked" && parent.blockedBy === after.id,
    via(`parent of ${after.id} not blocked by it`),
  );
  ensure(
    parent !== undefined &&
      !after.prerequisites.includes(parent.id) &&
      after.prerequisites.join() === parent.prerequisites.join() &&
      after.depth === parent.depth + 1,
    via(`resolver ${after.id} prerequisites/depth do not match its parent`),
  );
}

/** Liveness: blockedBy is set exactly while blocked and names an open resolver. */
export function checkBlockedBy({ next, via }: Step, t: Task): void {
  ensure(
    (t.blockedBy !== null) === (t.status === "blocked") || t.status === "cancelled",
    via(`${t.id} is ${t.status} with blockedBy ${t.blockedBy}`),
  );
  if (t.status === "blocked") {
    const resolver = next.tasks.get(t.blockedBy ?? "");
    ensure(
      resolver?.parentId === t.id && resolver.status !== "done" && resolver.status !== "cancelled",
      via(`${t.id} blocked by ${t.blockedBy}, which is ${resolver?.status}`),
    );
  }
}
