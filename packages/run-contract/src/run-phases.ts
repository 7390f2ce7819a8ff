import { z } from "zod";

/**
 * The phases of one run, in the order they happen. Each is a stretch of wall time; one run's
 * phases follow each other without gaps or overlaps, from the run's creation (the claim) to the
 * application of its result, so they add up to the run's duration (created_at → ended_at):
 *
 *   queue_wait      created (claimed) until a worker picked its job
 *   fetch           the worker's mirror fetch (skipped when the mirror already holds the head)
 *   checkout        worktree, prompt, control dir, placed files (and a merge of the main branch),
 *                   the repository's .overseer/environment.yml read
 *   image           the run image resolved, and pulled and unpacked on a cache miss
 *   agent_cli       the environment file's agent CLI installed (a cache miss) or found
 *   sandbox         the run's sandbox and disk guard are prepared
 *   environment_setup  the environment file's setup commands (only when it has some)
 *   setup_hook      the runner config's setup hook (only when there is one)
 *   agent           the agent CLI, from its start to its exit (or its transition and linger)
 *   after_run_hook  the runner config's after_run hook (only when there is one)
 *   scope_check     the transition checked, changed paths against the task scope
 *   commit          the hand-in or checkpoint commit
 *   push            the compare-and-swap push of the task branch or checkpoint
 *   land            an approve: integration, check command and push of the landing branch
 *   result_applied  the result's trip through the result queue and its transaction (coordinator)
 *
 * A phase a run did not reach is absent. The timings travel in the run result (`timing.timeline`)
 * and are stored with the run; the same list becomes the run's OpenTelemetry spans.
 */
export const RUN_PHASES = [
  "queue_wait",
  "fetch",
  "checkout",
  "image",
  "agent_cli",
  "sandbox",
  "environment_setup",
  "setup_hook",
  "agent",
  "after_run_hook",
  "scope_check",
  "commit",
  "push",
  "land",
  "result_applied",
] as const;
export type RunPhaseName = (typeof RUN_PHASES)[number];

export const runPhaseSchema = z.object({
  name: z.enum(RUN_PHASES),
  /** Epoch milliseconds (fractions allowed) when the phase began. */
  startedAt: z.number(),
  durationMs: z.number().nonnegative(),
});
export type RunPhase = z.infer<typeof runPhaseSchema>;

/** W3C Trace Context `traceparent` (version 00): trace id, parent span id, flags. */
export const traceparentSchema = z
  .string()
  .regex(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/, "a W3C traceparent: 00-<32 hex>-<16 hex>-<2 hex>");

/** When the last phase of a timeline ends (epoch ms), or null for an empty one. */
export function timelineEnd(phases: readonly RunPhase[]): number | null {
  const last = phases.at(-1);
  return last === undefined ? null : last.startedAt + last.durationMs;
}
