/**
 * Which of the coordinator's own commits call for a scheduling pass, and the wake timers of
 * retry backoffs. A pass is a claim transaction plus a read of the project; one that cannot
 * change anything is not run, found out from what is already in memory:
 *
 * - a commit with only quiet events (a claim's queued runs, a run starting) makes nothing
 *   runnable: no pass;
 * - a commit that no other commit of this coordinator on the project overlapped
 *   (TransitionApplier's `overlapped`) carries the project's whole state as of its commit
 *   (`result.state`: every earlier own commit is in its snapshot, and every later or foreign
 *   change kicks a pass of its own, by its commit or its NOTIFY). When claiming on that state
 *   would change nothing (`claimChangesNothing`), the pass is left out; the state's earliest
 *   retry backoff still arms the wake timer that kicks a pass then;
 * - otherwise, a pass. Of two overlapping commits the one committing last is always the
 *   overlapped one, so its pass reads both.
 *
 * Left out only where a pass does nothing but the claim: never for a pull_request project (its
 * pass also asks for the forge's work), nor for a project with a budget (its pass checks the
 * spend, which its row in memory may not hold), nor without the project's row in memory.
 */
import type { AppliedTransition } from "@overseer/db";
import { claimChangesNothing, nextWakeAt, type ProjectState } from "@overseer/domain";
import type { ProjectPolicies } from "./project-policy.ts";
import type { ProjectRows } from "./project-rows.ts";
import { claimCommand, QUIET_EVENTS } from "./scheduling-rules.ts";

export class PassGate {
  private readonly wakeTimers = new Map<string, NodeJS.Timeout>();
  private skipped = 0;

  constructor(
    private readonly rows: ProjectRows,
    private readonly policies: ProjectPolicies,
    /** Asks for a pass (coalescing; nothing when the project is not owned). */
    private readonly kick: (projectId: string) => void,
  ) {}

  /** After a commit of this coordinator that applied something: a pass, or none. */
  afterCommit(projectId: string, result: AppliedTransition, overlapped: boolean): void {
    if (result.events.every((e) => QUIET_EVENTS.has(e.type))) return;
    if (!overlapped && this.claimCannotChange(projectId, result.state)) {
      this.skipped++;
      this.armWakeTimer(projectId, result.state);
      return;
    }
    this.kick(projectId);
  }

  private claimCannotChange(projectId: string, state: ProjectState): boolean {
    const row = this.rows.cached(projectId);
    if (!row) return false;
    const policy = this.policies.ifValid(row);
    if (!policy.ok || policy.policy.landing.mode === "pull_request") return false;
    const { usd, tokens } = policy.policy.budgets;
    if (usd !== null || tokens !== null) return false;
    return claimChangesNothing(state, claimCommand(this.policies, row), Date.now());
  }

  /** A pass when the state's earliest retry backoff ends (none: no timer). */
  armWakeTimer(projectId: string, state: ProjectState): void {
    const at = nextWakeAt(state, Date.now());
    this.forget(projectId);
    if (at === null) return;
    const timer = setTimeout(
      () => {
        this.wakeTimers.delete(projectId);
        this.kick(projectId);
      },
      Math.max(0, at - Date.now()) + 5,
    );
    timer.unref();
    this.wakeTimers.set(projectId, timer);
  }

  /** Clears the project's wake timer (its lease is gone). */
  forget(projectId: string): void {
    const timer = this.wakeTimers.get(projectId);
    if (timer) clearTimeout(timer);
    this.wakeTimers.delete(projectId);
  }

  stop(): void {
    for (const timer of this.wakeTimers.values()) clearTimeout(timer);
    this.wakeTimers.clear();
  }

  /** Passes left out so far (commits whose claim could change nothing). */
  get skippedPasses(): number {
    return this.skipped;
  }
}
