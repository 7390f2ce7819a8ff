import { z } from "zod";

/**
 * A launch prelude: the steps a spawned child takes on itself between fork and exec, when the
 * spawner can take them (the Perl one on x86_64 and aarch64: bin/process-spawner.pl says so in
 * its HELLO frame). It replaces a host launcher (a shell that takes the same steps, then execs the
 * command), which costs an exec and ~0.9 ms of CPU per spawn: the sandbox drivers'
 * `overseer-sandbox` launcher (packages/sandbox launcher-script.ts builds both from one list).
 *
 * In the child, in this order, after its new session, stdio and cwd:
 *   1. every inherited descriptor but 0-2 is closed (the spawner's own are close-on-exec already;
 *      this ends those the spawner itself inherited without it),
 *   2. the steps, in their order:
 *      - `open`: opens `path` read-only on descriptor `fd` (3-9, inherited by the command),
 *      - `join`: writes the child's pid into `path` (a cgroup's cgroup.procs), without creating it,
 *      - `rlimit`: sets both the soft and the hard limit of `resource` to `value` (seconds for
 *        cpu, bytes for the others),
 *   3. the environment is emptied (whatever the request's `env` holds), then the command is exec'd.
 * A step that fails writes its `failure` line to stderr and the child exits with `failureExit`
 * (the command never runs); a step whose `failure` is null may fail silently.
 */

const FAILURE_LINE = z
  .string()
  .min(1)
  .max(512)
  .regex(/^[^\n\0]*$/);
const ABSOLUTE_PATH = z
  .string()
  .min(2)
  .max(4096)
  .regex(/^\/[^\0]*$/);

const LAUNCH_RLIMITS = ["core", "cpu", "as", "fsize"] as const;

const launchStepSchema = z.discriminatedUnion("op", [
  z
    .object({
      op: z.literal("open"),
      fd: z.number().int().min(3).max(9),
      path: ABSOLUTE_PATH,
      failure: FAILURE_LINE,
    })
    .strict(),
  z.object({ op: z.literal("join"), path: ABSOLUTE_PATH, failure: FAILURE_LINE }).strict(),
  z
    .object({
      op: z.literal("rlimit"),
      resource: z.enum(LAUNCH_RLIMITS),
      value: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
      failure: FAILURE_LINE.nullable(),
    })
    .strict(),
]);

export const launchPreludeSchema = z
  .object({
    steps: z.array(launchStepSchema).max(64),
    failureExit: z.number().int().min(1).max(255),
  })
  .strict();

export type LaunchStep = z.infer<typeof launchStepSchema>;
export type LaunchPrelude = z.infer<typeof launchPreludeSchema>;

/**
 * A command as the spawner runs it when it can apply `prelude` itself: `file args` with an
 * empty environment, instead of the launcher command the caller passed (which takes the same
 * steps in a shell).
 */
export interface PreludeLaunch {
  readonly file: string;
  readonly args: readonly string[];
  readonly prelude: LaunchPrelude;
}
