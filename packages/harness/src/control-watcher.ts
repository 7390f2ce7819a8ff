import { type FSWatcher, watch } from "node:fs";
import type { ControlTransition } from "@overseer/run-contract";
import { readControlDir } from "./control-dir-reader.ts";
import { epochNow } from "./harness-spawner.ts";

export interface ControlWatcherOptions {
  readonly controlDir: string;
  readonly maxBytes: number;
  /** Backup poll besides fs.watch (filesystems without inotify). */
  readonly pollMs: number;
  /** Called once, when the first valid transition is read. */
  readonly onTransition: (transition: ControlTransition) => void;
}

/**
 * Phase 4 of a run: watches the run's control dir (fs.watch plus a slow backup poll) for the
 * transition the agent records. Checks are coalesced: one read at a time, one more if anything
 * changed meanwhile. A file that is present but invalid does not end the run; it is reported
 * by {@link close} as the control error.
 */
export class ControlWatcher {
  private found: ControlTransition | null = null;
  private foundAt: number | null = null;
  private checking: Promise<void> | null = null;
  private recheck = false;
  private watcher: FSWatcher | null = null;
  private poll: NodeJS.Timeout | null = null;
  /** Reads of the control dir so far (tests count them). */
  reads = 0;

  constructor(private readonly options: ControlWatcherOptions) {}

  get transition(): ControlTransition | null {
    return this.found;
  }

  /** Epoch ms when the transition was seen; null without one. */
  get transitionAt(): number | null {
    return this.foundAt;
  }

  /**
   * Starts watching and checks once at once. A change to a dotfile is not looked at: the reader
   * ignores dotfiles, and overseer-agent's temp file and lock (several events per transition)
   * are dotfiles; the rename that publishes `transition.json` is an event of its own.
   */
  start(): void {
    try {
      this.watcher = watch(this.options.controlDir, { persistent: false }, (_event, name) => {
        if (typeof name === "string" && name.startsWith(".")) return;
        void this.check();
      });
      this.watcher.on("error", () => undefined);
    } catch {
      // No inotify here: the backup poll still finds the transition.
    }
    this.poll = setInterval(() => void this.check(), this.options.pollMs);
    void this.check();
  }

  /** Reads the control dir now (or joins the read under way); resolves when it is done. */
  check(): Promise<void> {
    if (this.found) return Promise.resolve();
    if (this.checking) {
      this.recheck = true;
      return this.checking;
    }
    this.checking = (async () => {
      do {
        this.recheck = false;
        this.reads += 1;
        const read = await readControlDir(this.options.controlDir, { maxBytes: this.options.maxBytes });
        if (read.ok && !this.found) {
          this.found = read.transition;
          this.foundAt = epochNow();
          this.options.onTransition(read.transition);
        }
      } while (this.recheck && !this.found);
    })().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  /**
   * Stops watching and reads the dir a last time (a transition written as the harness exited
   * still counts, without calling `onTransition`). Returns why its content was refused, or null.
   */
  async close(): Promise<string | null> {
    this.watcher?.close();
    if (this.poll) clearInterval(this.poll);
    while (this.checking) await this.checking;
    if (this.found) return null;
    const read = await readControlDir(this.options.controlDir, { maxBytes: this.options.maxBytes });
    if (read.ok) {
      this.found = read.transition;
      this.foundAt = epochNow();
      return null;
    }
    return read.code === "no_file" ? null : read.error;
  }
}
