/**
 * Seed data of the benchmarks that load the gateway (gateway-bench.ts, web-bench.ts): active
 * projects with many tasks, queued runs and pending decision cards, written through the same
 * transitions as production.
 */
import { applyTransition, createProject, type Db } from "@overseer/db";
import type { TaskCardInput } from "@overseer/domain";
import { taskCard } from "@overseer/test-support";
import { importTasks, startProject, TransitionApplier } from "@overseer/transitions";

/** `count` independent tasks S00-0001, S00-0002… that may touch any file. */
export function benchTasks(count: number): TaskCardInput[] {
  return Array.from({ length: count }, (_, i) => ({
    ...taskCard(`S00-${String(i + 1).padStart(4, "0")}`),
    scope: ["**"],
  }));
}

/** An active project `id` holding `tasks` benchmark tasks. */
export async function seedActiveProject(
  db: Db,
  id: string,
  tasks: number,
  options: { objective: string; concurrency?: number },
): Promise<void> {
  await createProject(db, {
    id,
    repo: "/tmp/none",
    runnerConfig: {},
    objective: options.objective,
    concurrency: options.concurrency,
  });
  const applier = new TransitionApplier({ db });
  await importTasks(applier, id, benchTasks(tasks));
  await startProject(applier, id);
}

/** Claims the next runnable task of `projectId`: a queued run, or none when nothing is runnable. */
export async function claimNext(db: Db, projectId: string): Promise<{ id: string } | undefined> {
  const claimed = await applyTransition(db, projectId, { kind: "claim" });
  return claimed.changes.runs[0];
}

/** Claims the next task and escalates it with a question for the operator: one pending card. */
export async function raisePendingCard(db: Db, projectId: string): Promise<void> {
  const run = await claimNext(db, projectId);
  if (!run) return;
  await applyTransition(db, projectId, {
    kind: "escalate",
    runId: run.id,
    reason: "Needs a decision",
    needsUser: true,
    question: "Which way?",
    options: [
      { id: "a", label: "A" },
      { id: "b", label: "B" },
    ],
  });
}
