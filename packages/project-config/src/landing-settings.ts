/**
 * A project's landing settings as the coordinator and the domain use them: the runner
 * config's `landing.mode`, `landing.pull_request` (camelCase, defaults applied) and `forge`,
 * resolved once per project version (services/coordinator project-policy.ts).
 *
 * `forge` carries the token: it is for host-side code only (the coordinator's forge runner,
 * `doctor`). The run-job builder never reads it, so it never reaches a RunJob.
 */
import {
  type ForgeAuth,
  type ForgeKindName,
  forgeAuthOf,
  type LandingMode,
  type PULL_REQUEST_ON_CLOSED,
  type PULL_REQUEST_PREREQUISITES,
  type PullRequestMergeMethod,
  type PullRequestMergePolicy,
} from "./landing-config-schema.ts";
import type { RunnerConfig } from "./runner-config-schema.ts";

export interface PullRequestSettings {
  readonly labels: readonly string[];
  readonly merge: PullRequestMergePolicy;
  readonly mergeMethod: PullRequestMergeMethod;
  readonly requiredApprovals: number;
  /** [] = every check reported on the head gates. */
  readonly requiredChecks: readonly string[];
  readonly onClosed: (typeof PULL_REQUEST_ON_CLOSED)[number];
  readonly prerequisites: (typeof PULL_REQUEST_PREREQUISITES)[number];
  /** 0 = no polling. */
  readonly pollSeconds: number;
  readonly logTailBytes: number;
}

/** The project's forge connection (host-side only: holds the token or the App's key). */
export interface ForgeSettings {
  readonly kind: ForgeKindName;
  readonly url: string;
  readonly repository: string;
  /** The access token, unless the project uses a GitHub App (`app`). */
  readonly token?: string | undefined;
  readonly app?:
    | { readonly id: number; readonly installation_id: number; readonly private_key: string }
    | undefined;
  /** How the forge runner authenticates, from `token` or `app`. */
  readonly auth: ForgeAuth;
}

export type LandingSettings =
  | { readonly mode: "push"; readonly pullRequest: PullRequestSettings; readonly forge: ForgeSettings | null }
  | {
      readonly mode: "pull_request";
      readonly pullRequest: PullRequestSettings;
      readonly forge: ForgeSettings;
    };

/** The resolved landing settings of a parsed config (the schema guarantees `forge` in pull_request mode). */
export function landingSettingsOf(config: RunnerConfig): LandingSettings {
  const pr = config.landing.pull_request;
  const pullRequest: PullRequestSettings = Object.freeze({
    labels: Object.freeze([...pr.labels]),
    merge: pr.merge,
    mergeMethod: pr.merge_method,
    requiredApprovals: pr.required_approvals,
    requiredChecks: Object.freeze([...pr.required_checks]),
    onClosed: pr.on_closed,
    prerequisites: pr.prerequisites,
    pollSeconds: pr.poll_seconds,
    logTailBytes: pr.log_tail_bytes,
  });
  const forge = config.forge ? Object.freeze({ ...config.forge, auth: forgeAuthOf(config.forge) }) : null;
  const mode: LandingMode = config.landing.mode;
  if (mode === "pull_request") {
    if (forge === null)
      throw new Error("landing.mode pull_request without forge: the schema refuses this config");
    return { mode, pullRequest, forge };
  }
  return { mode, pullRequest, forge };
}
