import { promises as fs } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { GitInputError } from "./git-error.ts";

/**
 * Where a project's repository lives, classified the way git itself does: `scheme://…` is a
 * URL (`file://` is a local path), `host:path` with the colon before any slash is scp-like
 * SSH, anything else is a local path (made absolute so a later cwd change does not move it).
 *
 * The distinction matters for two reasons:
 * - a local remote's server side (`git-upload-pack`, `git-receive-pack`) runs on the worker
 *   host with the worker's privileges, so it gets the same hardening as our own calls
 *   ({@link localServerCommand}) — no hooks from the remote's `hooks/` or `core.hooksPath`,
 *   no fsmonitor, and never `receive.denyCurrentBranch=updateInstead` (which would rewrite
 *   the user's working tree);
 * - only a local remote can be a non-bare repository whose checked-out branch must not be
 *   pushed to (docs/architecture.md, Git: integration branch).
 */
export type RemoteLocation =
  | { readonly kind: "local"; readonly path: string; readonly gitUrl: string }
  | { readonly kind: "url"; readonly gitUrl: string };

const SCHEME_URL = /^([a-z][a-z0-9+.-]*):\/\//i;

export function parseRemoteLocation(remote: string, field = "remote"): RemoteLocation {
  if (typeof remote !== "string" || remote.trim() === "") {
    throw new GitInputError(field, `expected a local path or a git URL, received ${JSON.stringify(remote)}`);
  }
  if (remote.startsWith("-") || /[\0\n\r]/.test(remote)) {
    throw new GitInputError(
      field,
      `${JSON.stringify(remote)} is not a usable repository location (it starts with "-" or contains a control character)`,
    );
  }
  const scheme = SCHEME_URL.exec(remote);
  if (scheme) {
    if (scheme[1]?.toLowerCase() === "file") {
      const local = fileURLToPath(remote);
      return { kind: "local", path: local, gitUrl: local };
    }
    return { kind: "url", gitUrl: remote };
  }
  const colon = remote.indexOf(":");
  const slash = remote.indexOf("/");
  if (colon > 0 && (slash === -1 || colon < slash)) {
    // scp-like `user@host:path`, or a transport helper `<helper>::<address>`.
    return { kind: "url", gitUrl: remote };
  }
  const local = path.resolve(remote);
  return { kind: "local", path: local, gitUrl: local };
}

/** `-c` settings for a git server process run on this host for a local remote. */
const LOCAL_SERVER_CONFIG = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "safe.directory=*",
  "receive.denyCurrentBranch=refuse",
  "receive.denyDeleteCurrent=refuse",
  "receive.autogc=false",
  "gc.autoDetach=false",
];

/**
 * In the receive-pack of a local remote without alternates of its own: its connectivity check
 * (`rev-list … --not --all --alternate-refs`) runs in the push's quarantine, where the only
 * "alternate" is the repository itself, so the alternate refs are its own refs, which `--all`
 * already names; the `for-each-ref` git runs to list them is replaced by `true` (no output).
 * The check itself is unchanged. A remote with `objects/info/alternates` keeps git's command.
 */
const NO_SELF_ALTERNATE_REFS = "core.alternateRefsCommand=true";

/**
 * The command git runs (through `sh -c`, as it always does for local transports) for the
 * server side of a local remote. Every word is single-quoted; nothing here comes from input.
 * `exec`: git appends the quoted path, and with a quoted word dash forks the command instead
 * of replacing itself, so a shell would stay alive for the whole fetch or push.
 */
export function localServerCommand(program: "upload-pack" | "receive-pack", ownAlternates = true): string {
  const words = ["exec", "git"];
  const settings =
    program === "receive-pack" && !ownAlternates
      ? [...LOCAL_SERVER_CONFIG, NO_SELF_ALTERNATE_REFS]
      : LOCAL_SERVER_CONFIG;
  for (const setting of settings) words.push("-c", `'${setting}'`);
  words.push(program);
  return words.join(" ");
}

/** Whether a local remote borrows objects from other repositories (`objects/info/alternates`). */
export async function hasOwnAlternates(location: RemoteLocation): Promise<boolean> {
  if (location.kind !== "local") return false;
  return fs.access(path.join(location.path, "objects", "info", "alternates")).then(
    () => true,
    () => false,
  );
}

/**
 * Arguments selecting the hardened server program for `fetch`/`clone`/`ls-remote` or `push`;
 * `ownAlternates` (hasOwnAlternates) false lets a push skip the self-listing (above).
 */
export function serverProgramArgs(
  location: RemoteLocation,
  direction: "fetch" | "push",
  ownAlternates = true,
): string[] {
  if (location.kind !== "local") return [];
  return direction === "fetch"
    ? [`--upload-pack=${localServerCommand("upload-pack")}`]
    : [`--receive-pack=${localServerCommand("receive-pack", ownAlternates)}`];
}
