import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "@overseer/runtime";
import type { HarnessExit } from "./harness-spawner.ts";
import { type TerminateOutcome, terminateProcessGroup } from "./process-group-killer.ts";

/**
 * Why the run ended: `exited` (by itself, without a transition), `transition` (a valid
 * transition was recorded: the group was ended for it, or the harness exited right after),
 * `timeout` / `stall` (hard timeout / idle watchdog), `aborted` (the caller's AbortSignal),
 * `fatal_output` (a line of output showed a failure no retry of the CLI can fix).
 */
export type HarnessEndReason = "exited" | "transition" | "timeout" | "stall" | "aborted" | "fatal_output";

export interface RunEnderOptions {
  readonly pid: number;
  readonly exited: Promise<HarnessExit>;
  /** The sandbox's own stop (SIGTERM inside, grace, SIGKILL of everything); else the group is signalled. */
  readonly stop?: ((pid: number, options: { graceMs: number }) => Promise<void>) | undefined;
  readonly killGraceMs: number;
  /** After a transition, how long the harness may take to exit by itself. */
  readonly transitionLingerMs: number;
  readonly logger: Logger;
}

/**
 * Phase 3 of a run: ends it once, for the first reason given, and leaves no process of its
 * group behind. After a transition the agent usually exits by itself within milliseconds (the
 * shell `overseer-agent` ends it): it gets `transitionLingerMs` before the group is stopped,
 * which costs a /proc walk and a grace period. A harness that already exited needs no graceful
 * stop: only leftovers in its group are killed (a sandbox's pid namespace died with it).
 */
export class RunEnder {
  private endReason: HarnessEndReason | null = null;
  private termination: Promise<TerminateOutcome> | null = null;

  constructor(private readonly options: RunEnderOptions) {}

  /** The first reason given, or null while the run goes on. */
  get reason(): HarnessEndReason | null {
    return this.endReason;
  }

  /** Ends the run for `reason`; later calls change nothing. */
  end(reason: HarnessEndReason): void {
    if (this.endReason !== null) return;
    this.endReason = reason;
    const { pid, logger, transitionLingerMs, exited } = this.options;
    logger.info({ pid, reason }, "ending harness process group");
    const linger =
      reason === "exited"
        ? Promise.resolve(true)
        : reason === "transition" && transitionLingerMs > 0
          ? Promise.race([exited.then(() => true), sleep(transitionLingerMs).then(() => false)])
          : Promise.resolve(false);
    this.termination = linger
      .then((gone) => (gone ? terminateProcessGroup(pid, 0) : this.stop()))
      .then((outcome) => {
        if (outcome === "killed")
          logger.warn({ pid, reason }, "harness ignored SIGTERM; process group killed");
        if (outcome === "survived") logger.error({ pid, reason }, "harness process group survived SIGKILL");
        return outcome;
      });
  }

  /** Resolves once the group is ended (undefined when the run was never ended). */
  async ended(): Promise<TerminateOutcome | undefined> {
    return (await this.termination) ?? undefined;
  }

  private async stop(): Promise<TerminateOutcome> {
    const { pid, stop, killGraceMs } = this.options;
    if (!stop) return terminateProcessGroup(pid, killGraceMs);
    await stop(pid, { graceMs: killGraceMs });
    return terminateProcessGroup(pid, 0);
  }
}
