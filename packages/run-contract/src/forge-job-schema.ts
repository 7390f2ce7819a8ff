import { z } from "zod";

/**
 * Jobs of the coordinator's forge runner (queue `forge`, services/coordinator forge-runner.ts):
 * host-side work on a task's pull request. A job names what to do and where, never a token or a
 * payload to trust: each reads Postgres (the pull request record, the stored webhook delivery)
 * and the forge itself, so a repeated or late job only re-reads. Versioned like the run job.
 */
export const FORGE_JOB_VERSION = 1;

const base = { v: z.literal(FORGE_JOB_VERSION), projectId: z.string().min(1) };

export const forgeJobSchema = z.discriminatedUnion("kind", [
  /** Open the task's pull request, or update it (title, body, base, labels) for its approved head. */
  z.object({ ...base, kind: z.literal("ensure"), taskId: z.string().min(1), headSha: z.string().min(1) }),
  /** Read the pull request, its checks, reviews and comments (conditionally) and report them. */
  z.object({ ...base, kind: z.literal("sync"), taskId: z.string().min(1) }),
  /** Apply one stored webhook delivery: route it to its task, then sync that task. */
  z.object({
    ...base,
    kind: z.literal("delivery"),
    forge: z.enum(["github", "gitlab", "gitea"]),
    deliveryId: z.string().min(1),
  }),
  /** Merge the approved, green head (`merge: auto`) or hand it to the forge's queue (`merge: queue`). */
  z.object({ ...base, kind: z.literal("merge"), taskId: z.string().min(1), headSha: z.string().min(1) }),
  /** Close the pull request unmerged (its task was cancelled). */
  z.object({
    ...base,
    kind: z.literal("close"),
    taskId: z.string().min(1),
    number: z.number().int().positive(),
  }),
]);
export type ForgeJob = z.infer<typeof forgeJobSchema>;
export type ForgeJobKind = ForgeJob["kind"];
