/**
 * Invariants of operator decisions: (e) awaiting_input is left only through an operator
 * command (or a start, for configuration cards), and a task is awaiting_input exactly while its
 * card is pending.
 */
import type { Command, Task } from "../../../src/index.ts";
import { ensure, type Step } from "./invariant-support.ts";

/** The operator commands that may take a task out of awaiting_input. */
const OPERATOR_RELEASES = new Set<Command["kind"]>([
  "answer",
  "resolve-decision",
  "release-external",
  "cancel",
  "stop",
  // A person merging or closing the pull request on the forge decides too (rule 18).
  "pr-merged",
  "pr-closed",
]);

/** (e) for one task after the step. */
export function checkAwaitingLeft({ command, via }: Step, after: Task, before: Task | undefined): void {
  // (e) awaiting_input is left only through an operator command.
  if (before?.status === "awaiting_input" && after.status !== "awaiting_input") {
    // `start` is the one step after a configuration fix: it releases configuration cards only.
    const viaStart =
      command.kind === "start-project" &&
      (before.awaitingReason === "configuration_error" || before.awaitingReason === "harness_not_configured");
    ensure(
      OPERATOR_RELEASES.has(command.kind) || viaStart,
      via(`${after.id} left awaiting_input for ${after.status}`),
    );
  }
}

/** Liveness: awaiting_input ⇔ a pending card. */
export function checkPendingCard({ next, via }: Step, t: Task): void {
  const pending = next.decisions.get(`decision-${t.id}`)?.status === "pending";
  ensure(
    pending === (t.status === "awaiting_input"),
    via(`${t.id} is ${t.status}; pending card: ${pending}`),
  );
}
