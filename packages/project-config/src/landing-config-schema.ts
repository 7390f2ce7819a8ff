/**
 * The runner config's `landing` and `forge` sections (docs/runner-config.md#landing, README
 * "Land through pull requests"): how approved work lands — pushed to the main branch (`push`,
 * the default) or through a pull request on the project's forge (`pull_request`) — and the
 * forge that pull requests live on.
 *
 * `forge.token` is a secret like `secrets`: never printed in errors, redacted wherever a config
 * is shown, and host-side only (the coordinator and `doctor` read it; the run-job builder never
 * copies it into a RunJob, so it never reaches Redis, a worker's job or a sandbox).
 */
import { REDACTED } from "@overseer/input-errors";
import { z } from "zod";

/** How approved work lands. */
export const LANDING_MODES = ["push", "pull_request"] as const;
export type LandingMode = (typeof LANDING_MODES)[number];

/** Forges a project can land through (the same kinds as `@overseer/forge`'s FORGE_KINDS). */
export const FORGE_KIND_NAMES = ["github", "gitlab", "gitea"] as const;
export type ForgeKindName = (typeof FORGE_KIND_NAMES)[number];

/** Who merges an open, approved pull request. */
export const PULL_REQUEST_MERGE_POLICIES = ["manual", "auto", "queue"] as const;
export type PullRequestMergePolicy = (typeof PULL_REQUEST_MERGE_POLICIES)[number];

export const PULL_REQUEST_MERGE_METHODS = ["merge", "squash", "rebase"] as const;
export type PullRequestMergeMethod = (typeof PULL_REQUEST_MERGE_METHODS)[number];

/** What a pull request closed without merging does to its task. */
export const PULL_REQUEST_ON_CLOSED = ["cancel", "todo"] as const;
/** When a prerequisite in pull_request mode counts as satisfied. */
export const PULL_REQUEST_PREREQUISITES = ["merged", "stacked"] as const;

/** Defaults of `landing.pull_request`, defined once (schema, docs, resolved settings). */
export const PULL_REQUEST_DEFAULTS = Object.freeze({
  labels: Object.freeze(["overseer"]) as readonly string[],
  merge: "manual" as PullRequestMergePolicy,
  merge_method: "squash" as PullRequestMergeMethod,
  required_approvals: 1,
  required_checks: Object.freeze([]) as readonly string[],
  on_closed: "cancel" as (typeof PULL_REQUEST_ON_CLOSED)[number],
  prerequisites: "merged" as (typeof PULL_REQUEST_PREREQUISITES)[number],
  poll_seconds: 120,
  log_tail_bytes: 8192,
});

function oneOf(values: readonly string[]): string {
  return `one of ${values.map((v) => `"${v}"`).join(", ")}`;
}

function integer(min: number, max: number, what: string) {
  const expected = `${what}: an integer from ${min} to ${max}`;
  return z.int({ error: expected }).min(min, { error: expected }).max(max, { error: expected });
}

const LABEL_EXPECTED = "a label name (1 to 50 characters, no commas or line breaks)";
const label = z
  .string({ error: LABEL_EXPECTED })
  .refine((v) => v.trim() !== "" && v.length <= 50 && !/[,\r\n]/.test(v), { error: LABEL_EXPECTED });

const CHECK_EXPECTED = "a check or status name (non-empty, no line breaks)";
const checkName = z
  .string({ error: CHECK_EXPECTED })
  .refine((v) => v.trim() !== "" && !/[\r\n]/.test(v), { error: CHECK_EXPECTED });

export const pullRequestSchema = z.strictObject({
  /** Labels added to the pull request (never removed). Default ["overseer"]. */
  labels: z
    .array(label, { error: `an array of labels (${LABEL_EXPECTED})` })
    .default([...PULL_REQUEST_DEFAULTS.labels]),
  /**
   * Who merges: `manual` (a person; the default), `auto` (Overseer, once approved by
   * `required_approvals` people and green, passing the approved head), `queue` (the forge's
   * auto-merge / merge queue / merge train). Overseer never bypasses branch protection.
   */
  merge: z
    .enum(PULL_REQUEST_MERGE_POLICIES, { error: oneOf(PULL_REQUEST_MERGE_POLICIES) })
    .default(PULL_REQUEST_DEFAULTS.merge),
  /** Merge method for `auto` and `queue`. Default squash. */
  merge_method: z
    .enum(PULL_REQUEST_MERGE_METHODS, { error: oneOf(PULL_REQUEST_MERGE_METHODS) })
    .default(PULL_REQUEST_DEFAULTS.merge_method),
  /** Approvals by people before `auto` merges (0 allowed). Default 1. */
  required_approvals: integer(0, 100, "a number of approvals").default(
    PULL_REQUEST_DEFAULTS.required_approvals,
  ),
  /** Check names that gate the merge; [] = every check reported on the head. Default []. */
  required_checks: z
    .array(checkName, { error: `an array of check names (${CHECK_EXPECTED})` })
    .default([...PULL_REQUEST_DEFAULTS.required_checks]),
  /** A pull request closed unmerged: the task is cancelled (`cancel`, default) or goes back to `todo`. */
  on_closed: z
    .enum(PULL_REQUEST_ON_CLOSED, { error: oneOf(PULL_REQUEST_ON_CLOSED) })
    .default(PULL_REQUEST_DEFAULTS.on_closed),
  /** A dependent task waits for its prerequisites' merge (`merged`, default) or stacks on their open PRs (`stacked`). */
  prerequisites: z
    .enum(PULL_REQUEST_PREREQUISITES, { error: oneOf(PULL_REQUEST_PREREQUISITES) })
    .default(PULL_REQUEST_DEFAULTS.prerequisites),
  /** Seconds between conditional (ETag) polls of each open pull request (catches lost webhooks); 0 = off. Default 120. */
  poll_seconds: integer(0, 86_400, "a number of seconds (0 = no polling)").default(
    PULL_REQUEST_DEFAULTS.poll_seconds,
  ),
  /** Bytes of a failing job's log tail fed to the executor. Default 8192. */
  log_tail_bytes: integer(256, 1_048_576, "a number of bytes").default(PULL_REQUEST_DEFAULTS.log_tail_bytes),
});

const URL_EXPECTED =
  "the forge's web URL: http(s)://host[:port][/path], without credentials, query or fragment";
function isForgeUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return (
    (url.protocol === "https:" || url.protocol === "http:") &&
    url.username === "" &&
    url.password === "" &&
    url.search === "" &&
    url.hash === ""
  );
}

const REPOSITORY_EXPECTED =
  "the repository's path on the forge: owner/name (GitLab: group/sub/project), without .git or slashes at the ends";
const REPOSITORY_SEGMENT = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;
export function isForgeRepository(value: string): boolean {
  const segments = value.split("/");
  return (
    segments.length >= 2 &&
    !value.endsWith(".git") &&
    segments.every((s) => REPOSITORY_SEGMENT.test(s) && s !== "." && s !== "..")
  );
}

const TOKEN_EXPECTED = "a non-empty access token (set by `overseer init --forge` from the init environment)";
const APP_ID_EXPECTED = "the GitHub App's id (a positive integer, on the App's settings page)";
const INSTALLATION_EXPECTED =
  "the App installation's id (a positive integer, in the installation's settings URL)";
const PRIVATE_KEY_EXPECTED =
  "the App's private key, PEM (-----BEGIN RSA PRIVATE KEY----- …), as GitHub generated it";

export const forgeSchema = z.strictObject({
  /** The forge: `github` (github.com or Enterprise Server), `gitlab` (gitlab.com or self-hosted), `gitea` (Gitea or Forgejo). */
  kind: z.enum(FORGE_KIND_NAMES, { error: oneOf(FORGE_KIND_NAMES) }),
  /** The forge's web URL, e.g. https://github.com, https://ghe.example, https://gitlab.example/gitlab. */
  url: z
    .string({ error: URL_EXPECTED })
    .refine(isForgeUrl, { error: URL_EXPECTED })
    .transform((v) => v.replace(/\/+$/, "")),
  /** owner/name (GitLab: group/sub/project). */
  repository: z
    .string({ error: REPOSITORY_EXPECTED })
    .refine(isForgeRepository, { error: REPOSITORY_EXPECTED }),
  /** The access token: secret, host-side only (never in a RunJob, Redis or a sandbox). Or `app`. */
  token: z
    .string({ error: TOKEN_EXPECTED })
    .refine((v) => v.trim() !== "" && !/[\s\0]/.test(v), { error: TOKEN_EXPECTED })
    .meta({ secret: true })
    .optional(),
  /**
   * GitHub only, instead of `token`: a GitHub App installed on the repository. The coordinator
   * mints (and renews) its installation tokens; `private_key` is a secret like `token`.
   */
  app: z
    .strictObject({
      id: z.int({ error: APP_ID_EXPECTED }).positive({ error: APP_ID_EXPECTED }),
      installation_id: z.int({ error: INSTALLATION_EXPECTED }).positive({ error: INSTALLATION_EXPECTED }),
      private_key: z
        .string({ error: PRIVATE_KEY_EXPECTED })
        // A config read back through the gateway holds the redacted key (doctor, init --update).
        .refine((v) => v === REDACTED || /-----BEGIN (RSA )?PRIVATE KEY-----/.test(v), {
          error: PRIVATE_KEY_EXPECTED,
        })
        .meta({ secret: true }),
    })
    .optional(),
});

/** How the forge runner authenticates: a token, or a GitHub App installation (structurally `@overseer/forge`'s GitHubAuth). */
export type ForgeAuth =
  | { readonly kind: "token"; readonly token: string }
  | {
      readonly kind: "app";
      readonly appId: number;
      readonly installationId: number;
      readonly privateKey: string;
    };

/** The auth of a parsed `forge` (the config check guarantees exactly one of `token` and `app`). */
export function forgeAuthOf(forge: {
  readonly token?: string | undefined;
  readonly app?:
    | { readonly id: number; readonly installation_id: number; readonly private_key: string }
    | undefined;
}): ForgeAuth {
  if (forge.app)
    return {
      kind: "app",
      appId: forge.app.id,
      installationId: forge.app.installation_id,
      privateKey: forge.app.private_key,
    };
  if (forge.token === undefined)
    throw new Error("forge has neither token nor app: the config check refuses this");
  return { kind: "token", token: forge.token };
}

export type ForgeSettingsInput = z.input<typeof forgeSchema>;
