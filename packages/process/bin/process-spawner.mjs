// The process spawner: a small Node process that starts child processes for its parent (a
// worker) and relays their stdio and ends over its own stdin/stdout. Plain JavaScript with
// Node built-ins only, so it runs with bare `node` from the sources and from the production
// build alike (scripts/build.mjs copies it next to the bundles), and stays small: forking it
// costs a fraction of forking the ~130 MB worker (packages/process/src/process-spawner.ts has
// the why, the parent side and the frame layout, which this file must match). process-spawner.pl
// is the same in Perl, cheaper to fork; this one runs where there is no perl (spawner-program.ts).
//
// Lifetime: it lives exactly as long as its parent. It ignores SIGINT, SIGTERM and SIGHUP (a
// terminal's Ctrl-C or a group signal is the parent's to handle; it may still need to run git
// while it drains) and exits when its stdin reaches end of file, which happens however the
// parent ends (even SIGKILL), or when it finds itself reparented. Before exiting it SIGKILLs
// the process groups of the detached children still running, as the parent would at its exit.
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { setPriority } from "node:os";

const HEADER = 9;
// Parent → spawner.
const SPAWN = 1;
const STDIN = 2;
const STDIN_END = 3;
// Spawner → parent.
const SPAWNED = 1;
const ERROR = 2;
const STDOUT = 3;
const STDERR = 4;
const EXIT = 5;
const CLOSE = 6;

const EMPTY = Buffer.alloc(0);
/** id → running child. */
const children = new Map();
/** Process groups of running detached children. */
const groups = new Set();
const parentPid = process.ppid;

function send(type, id, body = EMPTY) {
  const frame = Buffer.allocUnsafe(HEADER + body.length);
  frame.writeUInt32BE(HEADER - 4 + body.length, 0);
  frame.writeUInt8(type, 4);
  frame.writeUInt32BE(id, 5);
  body.copy(frame, HEADER);
  // A pipe: Node writes it synchronously, so frames go out whole and in order.
  process.stdout.write(frame);
}

const json = (value) => Buffer.from(JSON.stringify(value));

let autogroups;
/**
 * Lowers a detached child's CPU priority to `nice`: its own niceness and its session's
 * scheduling group where the kernel has them (packages/process/src/child-priority.ts says why;
 * the same steps as there). Best effort.
 */
function lowerSessionPriority(pid, nice) {
  if (!(nice > 0)) return;
  try {
    setPriority(pid, nice);
  } catch {
    // Gone already.
  }
  if (autogroups === undefined) {
    try {
      autogroups = readFileSync("/proc/sys/kernel/sched_autogroup_enabled", "utf8").trim() === "1";
    } catch {
      autogroups = false;
    }
  }
  if (!autogroups) return;
  try {
    writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // Gone already.
  }
}

function start(id, request) {
  const child = spawn(request.file, request.args, {
    cwd: request.cwd,
    env: request.env,
    stdio: [request.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    detached: request.detached,
    windowsHide: true,
  });
  const pid = child.pid;
  child.once("error", (error) => {
    const { message, code, errno, syscall, path } = error;
    send(ERROR, id, json({ message, code, errno, syscall, path, started: pid !== undefined }));
    if (pid === undefined) children.delete(id);
  });
  if (pid === undefined) return;
  children.set(id, child);
  if (request.detached) {
    groups.add(pid);
    lowerSessionPriority(pid, request.nice);
  }
  const pidBody = Buffer.allocUnsafe(4);
  pidBody.writeUInt32BE(pid, 0);
  send(SPAWNED, id, pidBody);
  child.stdin?.on("error", () => undefined);
  child.stdout.on("data", (chunk) => send(STDOUT, id, chunk));
  child.stderr.on("data", (chunk) => send(STDERR, id, chunk));
  child.once("exit", (code, signal) => send(EXIT, id, json({ code, signal })));
  child.once("close", (code, signal) => {
    children.delete(id);
    groups.delete(pid);
    send(CLOSE, id, json({ code, signal }));
  });
}

function onFrame(type, id, body) {
  if (type === SPAWN) return start(id, JSON.parse(body.toString("utf8")));
  const stdin = children.get(id)?.stdin;
  if (!stdin) return;
  if (type === STDIN) stdin.write(body);
  else if (type === STDIN_END) stdin.end();
}

/** Frames arrive split and joined anyway; chunks are joined only once a whole frame is there. */
let pending = [];
let pendingBytes = 0;
let needed = HEADER;

function onData(chunk) {
  pending.push(chunk);
  pendingBytes += chunk.length;
  while (pendingBytes >= needed) {
    const buffer = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingBytes);
    const length = 4 + buffer.readUInt32BE(0);
    if (buffer.length < length) {
      pending = [buffer];
      needed = length;
      return;
    }
    onFrame(buffer.readUInt8(4), buffer.readUInt32BE(5), buffer.subarray(HEADER, length));
    const rest = buffer.subarray(length);
    pending = rest.length > 0 ? [rest] : [];
    pendingBytes = rest.length;
    needed = HEADER;
  }
}

function shutdown() {
  for (const group of groups) {
    try {
      process.kill(-group, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  process.exit(0);
}

// Named in `ps` and /proc/<pid>/stat (the scale bench counts its CPU by this name).
process.title = "overseer-spawner";
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => undefined);
process.stdout.on("error", shutdown);
process.stdin.on("data", onData);
process.stdin.on("end", shutdown);
process.stdin.on("error", shutdown);
setInterval(() => {
  if (process.ppid !== parentPid) shutdown();
}, 1000).unref();
