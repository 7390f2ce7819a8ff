import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { deflateSync } from "node:zlib";
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
  const body = Buffer.from(text, "utf8");
  const object = Buffer.concat([Buffer.from(`commit ${body.length}\0`), body]);
  const sha = createHash("sha1").update(object).digest("hex");
  const dir = path.join(gitDir, "objects", sha.slice(0, 2));
  const file = path.join(dir, sha.slice(2));
  if (fs.existsSync(file)) {
    // git freshens an object it would have written, so gc's grace period counts from now.
    const now = commit.now ?? new Date();
    fs.utimesSync(file, now, now);
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
 * A repository whose objects are SHA-1 only, with git's default file modes: its config names
 * no object format (`extensions.objectFormat`, `extensions.compatObjectFormat`) and no
 * `core.sharedRepository`. Read synchronously: one small local file.
 */
function plainObjectStore(gitDir: string): boolean {
  const config = fs.readFileSync(path.join(gitDir, "config"), "utf8");
  return !/^\s*(?:compatobjectformat|objectformat|sharedrepository)\s*=/im.test(config);
}
