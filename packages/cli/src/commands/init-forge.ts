/**
 * `overseer init --forge github|gitlab|gitea --forge-url URL [--forge-repo owner/name]`: the
 * runner config's `forge` section and `landing.mode: pull_request` (docs/runner-config.md#pull-requests).
 * The repository is inferred from the project's repository URL when that is on the forge's host;
 * the token comes from the init environment (OVERSEER_FORGE_TOKEN, else the forge's usual variable),
 * never from a flag (it would land in the shell history and the process list). On GitHub,
 * `--forge-app-id N --forge-installation-id N` use a GitHub App instead, its private key read
 * from GITHUB_APP_PRIVATE_KEY (PEM).
 */
import {
  FORGE_KIND_NAMES,
  type ForgeKindName,
  type ForgeSettingsInput,
  isForgeRepository,
} from "@overseer/project-config";
import { UsageError } from "../cli-errors.ts";

/** The variable read first for any forge's token. */
export const FORGE_TOKEN_OVERRIDE_ENV = "OVERSEER_FORGE_TOKEN";

/** A GitHub App's private key (PEM), read with `--forge-app-id` and `--forge-installation-id`. */
export const GITHUB_APP_KEY_ENV = "GITHUB_APP_PRIVATE_KEY";

/** Each forge's usual token variable (read when OVERSEER_FORGE_TOKEN is not set). */
export const FORGE_TOKEN_ENV: Readonly<Record<ForgeKindName, string>> = Object.freeze({
  github: "GITHUB_TOKEN",
  gitlab: "GITLAB_TOKEN",
  gitea: "GITEA_TOKEN",
});

export interface ForgeFlags {
  readonly forge: string | undefined;
  readonly forgeUrl: string | undefined;
  readonly forgeRepo: string | undefined;
  /** A GitHub App instead of a token: its id and the installation's (both or neither). */
  readonly forgeAppId?: string | undefined;
  readonly forgeInstallationId?: string | undefined;
  /** The project's repository (`--repo`, or the registered one on --update). */
  readonly repo: string | undefined;
}

/** The `forge` section the flags describe, or null when `--forge` is absent. */
export function forgeFromFlags(
  flags: ForgeFlags,
  env: Readonly<Record<string, string | undefined>>,
): ForgeSettingsInput | null {
  const appFlags = flags.forgeAppId !== undefined || flags.forgeInstallationId !== undefined;
  if (flags.forge === undefined) {
    if (flags.forgeUrl !== undefined || flags.forgeRepo !== undefined)
      throw new UsageError("--forge-url and --forge-repo need --forge github|gitlab|gitea.");
    if (appFlags) throw new UsageError("--forge-app-id and --forge-installation-id need --forge github.");
    return null;
  }
  if (!(FORGE_KIND_NAMES as readonly string[]).includes(flags.forge))
    throw new UsageError(`--forge must be one of ${FORGE_KIND_NAMES.join(", ")}, received "${flags.forge}".`);
  const kind = flags.forge as ForgeKindName;
  if (flags.forgeUrl === undefined)
    throw new UsageError(
      `--forge ${kind} needs --forge-url, the forge's web URL (e.g. ${exampleUrl(kind)}; an Enterprise Server or self-hosted URL works too).`,
    );
  const url = forgeWebUrl(flags.forgeUrl);
  const repository = flags.forgeRepo ?? inferRepository(flags.repo, url);
  if (repository === null)
    throw new UsageError(
      `Cannot tell the repository's path on ${url} from --repo ${flags.repo ?? "(none)"}: it is not on that host; pass --forge-repo ${kind === "gitlab" ? "group/project" : "owner/name"}.`,
    );
  const twoSegments = kind !== "gitlab";
  if (!isForgeRepository(repository) || (twoSegments && repository.split("/").length !== 2))
    throw new UsageError(
      `--forge-repo must be ${twoSegments ? "owner/name" : "group/project or group/sub/project"} (no .git, no leading or trailing slash), received "${repository}".`,
    );
  if (!appFlags) return { kind, url, repository, token: forgeToken(kind, env) };
  if (kind !== "github")
    throw new UsageError(
      `--forge-app-id is for GitHub Apps; --forge ${kind} takes a token (${FORGE_TOKEN_ENV[kind]}).`,
    );
  return { kind, url, repository, app: githubApp(flags, env) };
}

/** The GitHub App of `--forge-app-id` and `--forge-installation-id`, its key from the environment. */
function githubApp(
  flags: ForgeFlags,
  env: Readonly<Record<string, string | undefined>>,
): { id: number; installation_id: number; private_key: string } {
  const id = positiveId(flags.forgeAppId, "--forge-app-id", "the App's id (its settings page: App ID)");
  const installation = positiveId(
    flags.forgeInstallationId,
    "--forge-installation-id",
    "the installation's id (the number at the end of the installation's settings URL)",
  );
  const key = env[GITHUB_APP_KEY_ENV]?.trim();
  if (!key || !/-----BEGIN (RSA )?PRIVATE KEY-----/.test(key))
    throw new UsageError(
      `No GitHub App key: set ${GITHUB_APP_KEY_ENV} in this environment to the App's private key (the .pem GitHub generated, e.g. ${GITHUB_APP_KEY_ENV}="$(cat app.private-key.pem)"), then run init again. It is stored as a secret (forge.app.private_key) and used host-side only.`,
    );
  return { id, installation_id: installation, private_key: key };
}

function positiveId(value: string | undefined, flag: string, what: string): number {
  if (value === undefined)
    throw new UsageError(
      `A GitHub App needs both --forge-app-id and --forge-installation-id; give ${flag}, ${what}.`,
    );
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n <= 0)
    throw new UsageError(`${flag} must be ${what}: a positive integer, received "${value}".`);
  return n;
}

/** The token from the init environment; missing or blank is an error naming the variables. */
function forgeToken(kind: ForgeKindName, env: Readonly<Record<string, string | undefined>>): string {
  for (const name of [FORGE_TOKEN_OVERRIDE_ENV, FORGE_TOKEN_ENV[kind]]) {
    const value = env[name]?.trim();
    if (value) {
      if (/\s/.test(value))
        throw new UsageError(`${name} holds whitespace; set it to the access token alone.`);
      return value;
    }
  }
  throw new UsageError(
    `No ${kind} token: set ${FORGE_TOKEN_ENV[kind]} (or ${FORGE_TOKEN_OVERRIDE_ENV}, which wins) in this environment to a token with the rights README "Land through pull requests" lists, then run init again. It is stored as a secret in the project's runner config (forge.token) and used host-side only.`,
  );
}

function exampleUrl(kind: ForgeKindName): string {
  return kind === "github"
    ? "https://github.com"
    : kind === "gitlab"
      ? "https://gitlab.com"
      : "https://gitea.example";
}

/** A validated forge web URL without a trailing slash. */
function forgeWebUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(
      `--forge-url must be the forge's web URL such as https://github.com, received "${raw}".`,
    );
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new UsageError(`--forge-url must be an http(s) URL, received "${raw}" (${url.protocol}).`);
  if (url.username !== "" || url.password !== "")
    throw new UsageError(
      `--forge-url must not hold credentials; put the token in ${FORGE_TOKEN_OVERRIDE_ENV} or the forge's token variable instead.`,
    );
  if (url.search !== "" || url.hash !== "")
    throw new UsageError(`--forge-url must have no query or fragment, received "${raw}".`);
  return `${url.origin}${url.pathname.replace(/\/+$/, "")}`;
}

/**
 * `owner/name` of a repository URL on the forge's host: https/http/ssh URLs and scp-like
 * `git@host:owner/name.git`; the forge URL's own path (a GitLab under /gitlab) is stripped.
 * Null when the repository is elsewhere (another host, a local path).
 */
export function inferRepository(repo: string | undefined, forgeUrl: string): string | null {
  if (repo === undefined) return null;
  const forge = new URL(forgeUrl);
  let host: string;
  let path: string;
  const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/)(.+)$/.exec(repo);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(repo)) {
    let url: URL;
    try {
      url = new URL(repo);
    } catch {
      return null;
    }
    host = url.hostname;
    path = decodeURIComponent(url.pathname);
    // https URLs must match the port too (ssh URLs use their own port).
    if ((url.protocol === "https:" || url.protocol === "http:") && url.host !== forge.host) return null;
  } else if (scp) {
    host = scp[1] ?? "";
    path = `/${scp[2] ?? ""}`;
  } else {
    return null;
  }
  if (host.toLowerCase() !== forge.hostname.toLowerCase()) return null;
  const prefix = forge.pathname.replace(/\/+$/, "");
  if (prefix !== "" && path.startsWith(`${prefix}/`)) path = path.slice(prefix.length);
  const repository = path.replace(/^\/+|\/+$/g, "").replace(/\.git$/, "");
  return repository === "" ? null : repository;
}
