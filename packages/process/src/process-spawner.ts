import { type ChildProcess, spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { Readable, Writable } from "node:stream";
import type { LaunchPrelude } from "./launch-prelude.ts";
import type { SpawnerCommand } from "./spawner-program.ts";

/**
 * The parent side of the process spawner (bin/process-spawner.pl, or bin/process-spawner.mjs
 * where there is no perl: spawner-program.ts).
 *
 * Why. `child_process.spawn` forks the calling process: its cost grows with the caller's
 * memory. From a ~130 MB worker a spawn costs ~1.25 ms of the worker's CPU plus ~1.8 ms in the
 * child before it execs, against ~0.55 + 0.7 ms from a ~50 MB process; a run spawns git about
 * twenty times. So a worker starts one small process, once, and has it spawn the children:
 * the worker only writes a request and reads back stdio and the end.
 *
 * Frames, both ways: u32 BE length of the rest, u8 type, u32 BE call id, body.
 *   parent → spawner: SPAWN (JSON request), STDIN (bytes), STDIN_END.
 *   spawner → parent: SPAWNED (u32 pid), ERROR (JSON: the child's `error` event; `started:
 *   false` means it never started and nothing follows), STDOUT / STDERR (bytes), EXIT and
 *   CLOSE (JSON code and signal; CLOSE is the last frame of a call); HELLO (call id 0, JSON
 *   `{"prelude":true}`), once at its start, from a spawner that applies launch preludes
 *   (launch-prelude.ts; the Perl one where it knows the syscalls: x86_64, aarch64).
 *
 * Failure. If the spawner dies (killed, out of memory) its running calls end at once with an
 * `error` saying so, and a `close` with no exit code; their process groups are SIGKILLed (they
 * would be orphans). Nothing is retried: a command that may have run is the caller's to run
 * again. The next call starts a new spawner.
 */

const HEADER = 9;
const SPAWN = 1;
const STDIN = 2;
const STDIN_END = 3;
const SPAWNED = 1;
const ERROR = 2;
const STDOUT = 3;
const STDERR = 4;
const EXIT = 5;
const CLOSE = 6;
const HELLO = 7;

export interface SpawnRequest {
  file: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Pipe the child's stdin (else it is /dev/null). */
  stdin: boolean;
  /** Own process group and session. */
  detached: boolean;
  /** Niceness of a detached child and its session (child-priority.ts); 0 keeps the spawner's. */
  nice?: number;
  /** Steps the child takes on itself before it execs (launch-prelude.ts); only to a spawner whose HELLO offered them. */
  prelude?: LaunchPrelude;
}

/** A child started through the spawner, shaped like the parts of a ChildProcess callers use. */
export class RemoteChild extends EventEmitter {
  pid: number | undefined;
  readonly stdout = new Readable({ read: () => undefined });
  readonly stderr = new Readable({ read: () => undefined });
  readonly stdin: Writable | null;
  private closing: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private closed = false;

  constructor(send: (type: number, body?: Buffer) => void, stdin: boolean) {
    super();
    this.stdin = stdin
      ? new Writable({
          write: (chunk: Buffer, _encoding, done) => {
            send(STDIN, chunk);
            done();
          },
          final: (done) => {
            send(STDIN_END);
            done();
          },
        })
      : null;
    for (const stream of [this.stdout, this.stderr]) stream.once("end", () => this.maybeClose());
  }

  /** @internal A frame for this call; true when it was the call's last. */
  receive(type: number, body: Buffer): boolean {
    if (type === STDOUT) this.stdout.push(body);
    else if (type === STDERR) this.stderr.push(body);
    else if (type === SPAWNED) {
      this.pid = body.readUInt32BE(0);
      this.emit("spawn");
    } else if (type === ERROR) {
      const info = JSON.parse(body.toString("utf8")) as { message: string; started: boolean };
      this.emit("error", Object.assign(new Error(info.message), info));
      return !info.started;
    } else if (type === EXIT) {
      const { code, signal } = JSON.parse(body.toString("utf8"));
      this.emit("exit", code, signal);
    } else if (type === CLOSE) {
      this.end(JSON.parse(body.toString("utf8")));
      return true;
    }
    return false;
  }

  /** @internal The call is over: the outputs end, then `close`. */
  end(closing: { code: number | null; signal: NodeJS.Signals | null }): void {
    this.closing = closing;
    this.stdout.push(null);
    this.stderr.push(null);
    this.maybeClose();
  }

  /**
   * As ChildProcess does: `close` once the call is over and each output that is read has
   * ended (every `data` delivered). An output nobody ever read does not hold it back.
   */
  private maybeClose(): void {
    if (this.closed || !this.closing) return;
    const done = (stream: Readable) => stream.readableEnded || stream.readableFlowing === null;
    if (!done(this.stdout) || !done(this.stderr)) return;
    this.closed = true;
    this.emit("close", this.closing.code, this.closing.signal);
  }
}

/** One running spawner process and the calls in flight through it. */
export class SpawnerConnection {
  readonly process: ChildProcess;
  readonly kind: SpawnerCommand["kind"];
  /** It ended by itself (an exit code other than 0) before its first frame: it cannot run here. */
  failedToRun = false;
  /** Its HELLO said it applies launch preludes (false until that frame arrived). */
  launchPrelude = false;
  /** Resolves with `launchPrelude` once known: at its HELLO, at once for the Node one, false if it died first. */
  readonly hello: Promise<boolean>;
  private greeted: (prelude: boolean) => void = () => undefined;
  private answered = false;
  private retiring = false;
  private readonly calls = new Map<number, RemoteChild>();
  private nextId = 1;
  private ended = false;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private needed = HEADER;

  constructor(command: SpawnerCommand) {
    this.kind = command.kind;
    this.hello = new Promise((resolve) => {
      this.greeted = resolve;
    });
    if (command.kind === "node") this.greeted(false);
    // Its own session (a terminal's signals are the parent's), nothing inherited but stderr
    // (its crash report lands in the worker's log); git gets each call's own environment.
    this.process = spawn(command.file, command.args, {
      stdio: ["pipe", "pipe", "inherit"],
      env: {},
      detached: true,
      windowsHide: true,
    });
    this.process.once("error", (error) => this.died(`could not be started: ${error.message}`));
    this.process.once("close", (code, signal) => {
      if (!this.answered && code !== null && code !== 0) this.failedToRun = true;
      this.died(signal ? `was killed by ${signal}` : `exited with code ${code}`);
    });
    this.process.stdin?.on("error", () => undefined);
    this.process.stdout?.on("data", (chunk: Buffer) => this.onData(chunk));
    this.idle();
  }

  get alive(): boolean {
    return !this.ended;
  }

  /** Starts `request` in the spawner; the answer arrives as the RemoteChild's events. */
  spawn(request: SpawnRequest): RemoteChild {
    const id = this.nextId;
    this.nextId = this.nextId === 0xffffffff ? 1 : this.nextId + 1;
    const child = new RemoteChild((type, body) => this.send(type, id, body), request.stdin);
    if (this.calls.size === 0) this.busy();
    this.calls.set(id, child);
    this.send(SPAWN, id, Buffer.from(JSON.stringify(request)));
    return child;
  }

  /** No more calls: it exits (stdin end of file) once those in flight are over. */
  retire(): void {
    this.retiring = true;
    if (this.calls.size === 0) this.process.stdin?.end();
  }

  /** Calls in flight. */
  get running(): number {
    return this.calls.size;
  }

  private send(type: number, id: number, body: Buffer = Buffer.alloc(0)): void {
    if (this.ended) return;
    const header = Buffer.allocUnsafe(HEADER);
    header.writeUInt32BE(HEADER - 4 + body.length, 0);
    header.writeUInt8(type, 4);
    header.writeUInt32BE(id, 5);
    this.process.stdin?.write(body.length < 65_536 ? Buffer.concat([header, body]) : header);
    if (body.length >= 65_536) this.process.stdin?.write(body);
  }

  private onData(chunk: Buffer): void {
    this.answered = true;
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    while (this.pendingBytes >= this.needed) {
      const buffer =
        this.pending.length === 1
          ? (this.pending[0] as Buffer)
          : Buffer.concat(this.pending, this.pendingBytes);
      const length = 4 + buffer.readUInt32BE(0);
      if (buffer.length < length) {
        this.pending = [buffer];
        this.needed = length;
        return;
      }
      this.onFrame(buffer.readUInt8(4), buffer.readUInt32BE(5), buffer.subarray(HEADER, length));
      const rest = buffer.subarray(length);
      this.pending = rest.length > 0 ? [rest] : [];
      this.pendingBytes = rest.length;
      this.needed = HEADER;
    }
  }

  private onFrame(type: number, id: number, body: Buffer): void {
    if (type === HELLO && id === 0) {
      this.launchPrelude = (JSON.parse(body.toString("utf8")) as { prelude?: unknown }).prelude === true;
      this.greeted(this.launchPrelude);
      return;
    }
    const child = this.calls.get(id);
    if (!child) return;
    if (child.receive(type, body)) {
      this.calls.delete(id);
      if (this.calls.size === 0) this.idle();
      if (this.calls.size === 0 && this.retiring) this.process.stdin?.end();
    }
  }

  /** Nothing in flight: the spawner must not keep the parent's event loop alive. */
  private idle(): void {
    this.process.unref();
    (this.process.stdout as { unref?: () => void } | null)?.unref?.();
    (this.process.stdin as { unref?: () => void } | null)?.unref?.();
  }

  /** A call in flight: its answer must keep the event loop alive, as a child process would. */
  private busy(): void {
    this.process.ref();
    (this.process.stdout as { ref?: () => void } | null)?.ref?.();
  }

  private died(how: string): void {
    if (this.ended) return;
    this.ended = true;
    this.greeted(false);
    const calls = [...this.calls.values()];
    this.calls.clear();
    for (const child of calls) {
      if (child.pid !== undefined) killGroupQuietly(child.pid);
      const error = new Error(
        `the process spawner (pid ${this.process.pid}) ${how} while this command ran; it was not retried ` +
          "(it may or may not have run): run it again, the next command starts a new spawner",
      );
      child.emit("error", Object.assign(error, { code: "ESPAWNERDIED" }));
      child.end({ code: null, signal: null });
    }
  }
}

function killGroupQuietly(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}
