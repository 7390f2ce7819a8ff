import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface ChildSpec {
  /** Name in output, e.g. `worker-1`. */
  readonly name: string;
  /** Arguments after the Node executable (loader flags, entry file). */
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
}

export interface RestartPolicy {
  /** First delay before restarting a crashed child; doubled after each quick crash. */
  readonly initialDelayMs: number;
  /** Largest delay between two restarts. */
  readonly maxDelayMs: number;
  /** A child that ran this long before crashing restarts after `initialDelayMs` again. */
  readonly stableAfterMs: number;
}

export interface ChildEvents {
  /** One line the child printed (stdout or stderr). */
  line(child: SupervisedChild, line: string): void;
  /** The child started (first time or after a restart). */
  started(child: SupervisedChild, pid: number, restart: number): void;
  /** The child ended while it should be running; `delayMs` until the restart, or null when it is not restarted. */
  crashed(child: SupervisedChild, exit: number | string | null, delayMs: number | null): void;
}

/** Exit code a service uses for a configuration error: restarting cannot help. */
const CONFIGURATION_ERROR = 2;

/**
 * One service process under supervision: started as its own process group (so a terminal's
 * Ctrl-C reaches the supervisor only, which then stops children in order), restarted with
 * exponential backoff when it crashes, never when it exits with a configuration error (2).
 */
export class SupervisedChild {
  private process: ChildProcess | null = null;
  private stopping = false;
  private restarts = 0;
  private quickCrashes = 0;
  private restartTimer: NodeJS.Timeout | null = null;
  private exitWaiters: (() => void)[] = [];
  /** Set when the child gave up (configuration error): the supervisor stops the cluster. */
  failure: string | null = null;

  constructor(
    readonly spec: ChildSpec,
    private readonly policy: RestartPolicy,
    private readonly events: ChildEvents,
  ) {}

  get name(): string {
    return this.spec.name;
  }

  /** Pid of the running process, or null between a crash and its restart. */
  get pid(): number | null {
    return this.process?.pid ?? null;
  }

  start(): void {
    const startedAt = Date.now();
    const child = spawn(process.execPath, [...this.spec.args], {
      cwd: this.spec.cwd,
      env: this.spec.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    this.process = child;
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) createInterface({ input: stream }).on("line", (line) => this.events.line(this, line));
    }
    child.once("spawn", () => this.events.started(this, child.pid as number, this.restarts));
    child.once("error", () => undefined);
    child.once("exit", (code, signal) => {
      this.process = null;
      const exit = code ?? signal;
      if (this.stopping) {
        for (const resolve of this.exitWaiters.splice(0)) resolve();
        return;
      }
      if (code === CONFIGURATION_ERROR) {
        this.failure = `${this.name} exited with a configuration error (exit 2)`;
        this.events.crashed(this, exit, null);
        for (const resolve of this.exitWaiters.splice(0)) resolve();
        return;
      }
      this.quickCrashes = Date.now() - startedAt >= this.policy.stableAfterMs ? 0 : this.quickCrashes + 1;
      const delayMs = Math.min(
        this.policy.maxDelayMs,
        this.policy.initialDelayMs * 2 ** Math.max(0, this.quickCrashes - 1),
      );
      this.events.crashed(this, exit, delayMs);
      this.restartTimer = setTimeout(() => {
        this.restartTimer = null;
        if (this.stopping) return;
        this.restarts += 1;
        this.start();
      }, delayMs);
    });
  }

  /** Sends `signal` again (e.g. a second SIGTERM that cuts a worker's drain short). */
  signal(signal: NodeJS.Signals): void {
    this.process?.kill(signal);
  }

  /**
   * Stops for good: no restart; SIGTERM, then SIGKILL to its whole process group when it is
   * still there after `killAfterMs`. Resolves once it has exited.
   */
  async stop(killAfterMs: number): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const child = this.process;
    if (!child) return;
    const exited = new Promise<void>((resolve) => this.exitWaiters.push(resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    }, killAfterMs);
    await exited;
    clearTimeout(timer);
  }

  /** Last resort when the supervisor itself exits: SIGKILL to the child's process group. */
  killNow(): void {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const pid = this.process?.pid;
    if (!pid) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
}
