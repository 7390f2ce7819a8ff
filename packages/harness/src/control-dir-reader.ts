import { closeSync, constants as fsConstants, fstatSync, openSync, readdirSync, readSync } from "node:fs";
import { join } from "node:path";
import { type ControlTransition, parseControlTransition, TRANSITION_FILE_NAME } from "@overseer/run-contract";
import { sanitizeValue } from "@overseer/task-files";
import { HARNESS_DEFAULTS } from "./harness-defaults.ts";

/** Default cap on the control file size: 256 KiB (the largest valid file is about 150 KiB). */
export const DEFAULT_CONTROL_MAX_BYTES = HARNESS_DEFAULTS.controlMaxBytes;

export interface ReadControlDirOptions {
  /** Largest control file accepted, in bytes. Default {@link DEFAULT_CONTROL_MAX_BYTES} (256 KiB). */
  maxBytes?: number;
}

/**
 * Why a control dir holds no usable transition. `no_file` is the ordinary "the agent has not
 * (yet) finished" state; every other code means the agent wrote something that is refused.
 */
export type ControlDirErrorCode =
  | "no_file"
  | "duplicate"
  | "unexpected_name"
  | "not_regular"
  | "oversized"
  | "unreadable"
  | "malformed"
  | "invalid";

export type ReadControlDirResult =
  | { ok: true; transition: ControlTransition }
  | { ok: false; code: ControlDirErrorCode; error: string };

/**
 * Reads the one transition a run's control dir may hold.
 *
 * The control dir is private to one run and writable by the (untrusted) agent, so every read
 * assumes hostile content:
 * - Dotfiles are in-progress atomic writes (`overseer-agent` writes `.transition.<pid>`, then
 *   renames) or locks and are ignored. Every other `*.json` entry counts as a transition file;
 *   more than one is refused as a whole, so a run can never apply two transitions.
 * - The file is opened with O_NOFOLLOW (a symlink could point at a worker secret) and
 *   O_NONBLOCK (a FIFO must not hang the worker), then fstat-ed: only a regular file is read.
 * - The size is checked before reading and the read is capped, so a growing file cannot make
 *   the worker read more than `maxBytes`.
 * - Bytes that are not valid UTF-8 are decoded as U+FFFD rather than refused, and so are NUL
 *   characters and lone surrogates written as JSON escapes (`sanitizeValue`): the transition
 *   (and the work behind it) is worth more than a mangled character in a commit message, and
 *   no string that Postgres cannot store leaves this reader.
 *
 * The calls are synchronous: one small directory and one file of at most `maxBytes`, read at the
 * run's start, on each change of the dir and at its end, where a promise per call (readdir,
 * open, fstat, read, close) cost the worker several times the CPU of the calls themselves. The
 * O_NONBLOCK open keeps them from waiting on a FIFO.
 */
export async function readControlDir(
  dir: string,
  options: ReadControlDirOptions = {},
): Promise<ReadControlDirResult> {
  const maxBytes = options.maxBytes ?? DEFAULT_CONTROL_MAX_BYTES;
  if (!Number.isInteger(maxBytes) || maxBytes <= 0) {
    throw new RangeError(`maxBytes must be a positive integer, received ${String(maxBytes)}`);
  }

  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    return {
      ok: false,
      code: "unreadable",
      error: `cannot read control dir ${dir}: ${(error as Error).message}`,
    };
  }
  const candidates = names.filter((name) => !name.startsWith(".") && name.endsWith(".json")).sort();
  if (candidates.length === 0) {
    return {
      ok: false,
      code: "no_file",
      error: `no ${TRANSITION_FILE_NAME} in ${dir}: the agent must end its run with "overseer-agent submit|approve|reject|escalate"`,
    };
  }
  if (candidates.length > 1) {
    return {
      ok: false,
      code: "duplicate",
      error: `found ${candidates.length} transition files (${candidates.join(", ")}) in ${dir}; a run ends with exactly one transition, so none of them is applied`,
    };
  }
  const name = candidates[0] as string;
  if (name !== TRANSITION_FILE_NAME) {
    return {
      ok: false,
      code: "unexpected_name",
      error: `found ${name} in ${dir}, expected ${TRANSITION_FILE_NAME}; write transitions with the bundled overseer-agent command`,
    };
  }

  const path = join(dir, name);
  let fd: number;
  try {
    fd = openSync(path, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") {
      return {
        ok: false,
        code: "not_regular",
        error: `${path} is a symbolic link; refusing to follow it (the transition must be a regular file written by overseer-agent)`,
      };
    }
    if (code === "ENOENT") {
      // Renamed away between readdir and open: treat as not there yet.
      return { ok: false, code: "no_file", error: `no ${TRANSITION_FILE_NAME} in ${dir}` };
    }
    return { ok: false, code: "unreadable", error: `cannot open ${path}: ${(error as Error).message}` };
  }

  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      return {
        ok: false,
        code: "not_regular",
        error: `${path} is not a regular file; refusing to read it (the transition must be a regular file written by overseer-agent)`,
      };
    }
    if (stat.size > maxBytes) {
      return {
        ok: false,
        code: "oversized",
        error: `${path} is ${stat.size} bytes; the limit is ${maxBytes} bytes (shorten the message/feedback)`,
      };
    }
    // Not zero-filled: only the bytes read are ever looked at.
    const buffer = Buffer.allocUnsafe(maxBytes + 1);
    let length = 0;
    while (length < buffer.length) {
      const bytesRead = readSync(fd, buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) {
      return {
        ok: false,
        code: "oversized",
        error: `${path} grew beyond ${maxBytes} bytes while being read (shorten the message/feedback)`,
      };
    }
    const text = buffer.subarray(0, length).toString("utf8");
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      return {
        ok: false,
        code: "malformed",
        error: `${path} is not valid JSON (${(error as Error).message}); write transitions with the bundled overseer-agent command`,
      };
    }
    const parsed = parseControlTransition(sanitizeValue(json));
    if (!parsed.ok) {
      return { ok: false, code: "invalid", error: `${path}: ${parsed.error}` };
    }
    return parsed;
  } catch (error) {
    return { ok: false, code: "unreadable", error: `cannot read ${path}: ${(error as Error).message}` };
  } finally {
    closeSync(fd);
  }
}
