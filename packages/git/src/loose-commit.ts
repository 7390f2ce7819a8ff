import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { deflateSync, inflateSync } from "node:zlib";
import { isFullSha } from "./ref-names.ts";

/**
 * A commit object written straight into a bare repository's object store, byte for byte what
 * `git commit-tree <tree> -p <parent>… -F -` writes with the same identity and time, without a
 * git process: the landing of every approved task makes one (landed-commit.ts), and a git
 * process costs the worker host ~3 ms of CPU (fork, exec, git's start) against ~0.1 ms here.
 *
 * The object is git's loose format (gitformat-loose): `commit <size>\0<body>` deflated with
 * zlib, named by its SHA-1 under `objects/<2 hex>/<38 hex>`, written to a temporary file in
 * that directory and linked into place as git does (`tmp_obj_*`, read-only), so a reader never
 * sees half an object and a concurrent writer of the same object wins or loses harmlessly.
 * The body is `tree`, one `parent` line per parent, `author` and `committer` (name, <email>,
 * seconds since the epoch, the local UTC offset), a blank line and the message as given.
 *
 * Returns null, for the caller to ask git, whenever git would write something else or the
 * repository is not the plain kind this writes: SHA-256 or compatibility object formats, a
 * shared repository (other file modes), an identity git would clean up (leading or trailing
 * punctuation or spaces, which git strips), a message git refuses or rewrites (a NUL byte,
 * U+FFFE/U+FFFF, which git's UTF-8 check re-encodes), repeated parents, or ids that are not
 * full SHA-1s. The tree and parents are not looked up: the caller passes ids git just gave it.
 */
export interface LooseCommit {
  tree: string;
  parents: readonly string[];
  /** The message, verbatim (commit-tree does no clean-up). */
  message: string;
  /** The identity environment of commit-identity.ts (author = committer). */
  env: Record<string, string>;
  /** When it is made. Default now. */
  now?: Date;
}

/** Characters git's ident code strips from both ends of a name or e-mail (`crud`), and `.`. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: git strips control characters too
const CRUD = /^[\s\x00-\x20.,:;<>"\\']|[\s\x00-\x20.,:;<>"\\']$/;
const REWRITTEN = /[\0\uFFFE\uFFFF]/;

export function writeLooseCommit(gitDir: string, commit: LooseCommit): string | null {
  const text = commitBody(commit);
  if (text === null || !plainObjectStore(gitDir)) return null;
  return writeLooseObject(gitDir, "commit", Buffer.from(text, "utf8"), commit.now);
}

/**
 * Writes the object `<type> <size>\0<body>` into the loose store of `gitDir` (see
 * writeLooseCommit: deflated, named by its SHA-1, linked into place from a `tmp_obj_*` file,
 * freshened when it exists) and returns its id. The caller has checked plainObjectStore.
 */
export function writeLooseObject(gitDir: string, type: "commit" | "tree", body: Buffer, now?: Date): string {
  const object = Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
  const sha = createHash("sha1").update(object).digest("hex");
  const dir = path.join(gitDir, "objects", sha.slice(0, 2));
  const file = path.join(dir, sha.slice(2));
  if (fs.existsSync(file)) {
    // git freshens an object it would have written, so gc's grace period counts from now; a
    // file it may not touch (another user's) still holds the object, as git finds too.
    const time = now ?? new Date();
    try {
      fs.utimesSync(file, time, time);
    } catch {
      // Kept as it is.
    }
    return sha;
  }
  fs.mkdirSync(dir, { recursive: true });
  const temporary = path.join(dir, `tmp_obj_${randomBytes(6).toString("hex")}`);
  fs.writeFileSync(temporary, deflateSync(object), { mode: 0o444, flag: "wx" });
  try {
    fs.linkSync(temporary, file);
  } catch (error) {
    // Written meanwhile by another writer: the same bytes, as the name says.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
      fs.rmSync(temporary, { force: true });
      throw error;
    }
  }
  fs.unlinkSync(temporary);
  return sha;
}

/** The commit's text, or null when git would write another (see writeLooseCommit). */
export function commitBody(commit: LooseCommit): string | null {
  const { tree, parents, message, env } = commit;
  const name = env.GIT_AUTHOR_NAME ?? "";
  const email = env.GIT_AUTHOR_EMAIL ?? "";
  const plain = (value: string) => value !== "" && !CRUD.test(value) && !/[\n<>]/.test(value);
  if (
    !plain(name) ||
    !plain(email) ||
    env.GIT_COMMITTER_NAME !== name ||
    env.GIT_COMMITTER_EMAIL !== email ||
    Object.keys(env).length !== 4 ||
    REWRITTEN.test(message) ||
    !isFullSha(tree) ||
    tree.length !== 40 ||
    parents.some((p) => !isFullSha(p) || p.length !== 40) ||
    new Set(parents).size !== parents.length
  ) {
    return null;
  }
  const ident = `${name} <${email}> ${gitDate(commit.now ?? new Date())}`;
  const lines = [
    `tree ${tree}`,
    ...parents.map((p) => `parent ${p}`),
    `author ${ident}`,
    `committer ${ident}`,
  ];
  return `${lines.join("\n")}\n\n${message}`;
}

/** git's raw date: seconds since the epoch and the local offset from UTC as ±hhmm. */
function gitDate(now: Date): string {
  const offset = -now.getTimezoneOffset();
  const abs = Math.abs(offset);
  const hhmm = `${String(Math.floor(abs / 60)).padStart(2, "0")}${String(abs % 60).padStart(2, "0")}`;
  return `${Math.floor(now.getTime() / 1000)} ${offset < 0 ? "-" : "+"}${hhmm}`;
}

/**
 * A repository whose objects are SHA-1 only, with git's default file modes and comment
 * character: its config names no object format (`extensions.objectFormat`,
 * `extensions.compatObjectFormat`), no `core.sharedRepository`, no `core.commentChar` (which
 * changes the lines git skips when it looks for trailers) and no `i18n.commitEncoding` (with
 * which git adds an `encoding` header). Read synchronously: one small file.
 */
export function plainObjectStore(gitDir: string): boolean {
  return plainObjectConfig(fs.readFileSync(path.join(gitDir, "config"), "utf8"));
}

/** {@link plainObjectStore} of a config file's text. */
export function plainObjectConfig(config: string): boolean {
  return !/^\s*(?:compatobjectformat|objectformat|sharedrepository|commentchar|commitencoding)\s*=/im.test(
    config,
  );
}

/** A commit as its object holds it: tree, parents and the message after the headers. */
export interface LooseCommitRead {
  tree: string;
  parents: string[];
  message: string;
}

/**
 * The commit `sha` read from its loose object (zlib of `commit <size>\0<body>`), without a git
 * process. Null, for the caller to ask git, when it is not a loose object (packed, absent), not
 * a commit, or has headers other than tree, parents, author and committer (an encoding, a
 * signature), which git would read differently. Decoded as UTF-8, as git's output is.
 */
export function readLooseCommit(gitDir: string, sha: string): LooseCommitRead | null {
  if (!isFullSha(sha) || sha.length !== 40) return null;
  let raw: Buffer;
  try {
    raw = inflateSync(fs.readFileSync(path.join(gitDir, "objects", sha.slice(0, 2), sha.slice(2))));
  } catch {
    return null;
  }
  const nul = raw.indexOf(0);
  if (nul < 0 || raw.toString("latin1", 0, nul) !== `commit ${raw.length - nul - 1}`) return null;
  const text = raw.toString("utf8", nul + 1);
  const end = text.indexOf("\n\n");
  if (end < 0) return null;
  const [first = "", ...rest] = text.slice(0, end).split("\n");
  const tree = first.slice("tree ".length);
  if (!first.startsWith("tree ") || !isFullSha(tree)) return null;
  const parents: string[] = [];
  for (const line of rest) {
    const parent = line.slice("parent ".length);
    if (line.startsWith("parent ") && isFullSha(parent)) parents.push(parent);
    else if (!line.startsWith("author ") && !line.startsWith("committer ")) return null;
  }
  return { tree, parents, message: text.slice(end + 2) };
}

const TRAILER = /^[A-Za-z0-9][A-Za-z0-9-]*: \S(?:.*\S)?$/;

/**
 * The trailer block git reads from `message` (`%(trailers:only,unfold)`: its lines, each ended
 * by a newline; "" for none), where the message is plainly one of two kinds: one paragraph (the
 * title, which git never reads as trailers), or a last paragraph made only of `Key: value`
 * lines after a blank line (Overseer's own block, commit-message-builder.ts). Null, for the
 * caller to ask git, for anything git might read otherwise: carriage returns, lines of spaces,
 * comment lines (`#`), patch dividers (`---`), continuation lines, a last paragraph mixing
 * trailers with text.
 */
export function plainTrailerBlock(message: string): string | null {
  if (message.includes("\r") || /^(?:#|---)/m.test(message)) return null;
  const lines = message.replace(/\n+$/, "").split("\n");
  if (lines.some((line) => line !== "" && line.trim() === "")) return null;
  const blank = lines.lastIndexOf("");
  if (blank === -1) return lines.some((line) => line.includes(":")) ? null : "";
  const block = lines.slice(blank + 1);
  if (blank === 0 || !block.every((line) => TRAILER.test(line))) return null;
  return `${block.join("\n")}\n`;
}
