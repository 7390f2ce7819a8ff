/**
 * Invariants of project control: (j) a start resets the session budget and is recorded;
 * (l) a settings change touches nothing but the project; only an import creates work tasks;
 * rule 12: session exhaustion pauses and completes nothing.
 */
import type { Task } from "../../../src/index.ts";
import { ensure, type Step } from "./invariant-support.ts";

/** (j) and (l). */
export function checkProjectCommand({ command, result, next, via }: Step): void {
  // (j) a start: active, fresh session budget, recorded.
  if (command.kind === "start-project") {
    ensure(
      next.project.status === "active" && next.project.sessionsUsed === 0,
      via("start left the project inactive or kept its used sessions"),
    );
    ensure(
      result.events.some((e) => e.type === "project.started"),
      via("start recorded no project.started event"),
    );
  }

  // (l) operator settings: nothing but the project changes, recorded with the changed keys.
  if (command.kind === "update-project-config") {
    const { changes } = result;
    ensure(
      changes.tasks.length === 0 && changes.runs.length === 0 && changes.decisions.length === 0,
      via("a settings change touched tasks, runs or cards"),
    );
    ensure(
      command.patch.concurrency === undefined || next.project.concurrency === command.patch.concurrency,
      via("the concurrency was not the one set"),
    );
    ensure(changes.settings === command.patch, via("the settings change was not recorded for persistence"));
    const event = result.events.find((e) => e.type === "project.config_updated");
    ensure(
      event !== undefined &&
        JSON.stringify(event.data.changed) ===
          JSON.stringify(
            (["runnerConfig", "objective", "concurrency", "budgetUsd"] as const).filter(
              (k) => command.patch[k] !== undefined,
            ),
          ),
      via("project.config_updated missing or naming other keys"),
    );
  }
}

/** A done or cancelled task stays so. */
export function checkTerminalStays({ via }: Step, after: Task, before: Task | undefined): void {
  if (before?.status === "done" || before?.status === "cancelled") {
    ensure(after.status === before.status, via(`${after.id} left ${before.status} for ${after.status}`));
  }
}

/** Only an import creates work tasks: new, todo, with every prerequisite known. */
export function checkImportedTask({ next, via }: Step, after: Task): void {
  // (k) imported by an approved plan: checked as a whole below.
  ensure(
    after.kind === "work" && after.status === "todo",
    via(`imported ${after.id} is not a todo work task`),
  );
  ensure(
    after.prerequisites.every((p) => next.tasks.has(p)),
    via(`imported ${after.id} has an unknown prerequisite`),
  );
}

/** Rule 12: exhaustion pauses, completes nothing. */
export function checkSessionsExhausted({ result, next, history, via }: Step): void {
  if (result.events.some((e) => e.type === "project.sessions_exhausted")) {
    history.stats.exhausted++;
    ensure(next.project.status === "paused", via("sessions exhausted but the project is not paused"));
    ensure(
      !result.changes.tasks.some((t) => t.status === "done"),
      via("sessions exhaustion completed a task"),
    );
  }
}
