import type { z } from "@hono/zod-openapi";
import type { PullRequestPolicySchema } from "@overseer/api-contract";
import { type LandingMode, landingSettingsOf, parseRunnerConfig } from "@overseer/project-config";

type PullRequestPolicy = z.infer<typeof PullRequestPolicySchema>;

/**
 * How a project's approved work lands, from its stored runner config: `landing_mode`, and in
 * `pull_request` mode the forge (kind, URL, repository; never the token) and the merge policy
 * (README "Land through pull requests"). A stored config that no longer parses shows its raw
 * `landing.mode` and no policy, so a bad row never breaks the project and status routes.
 */
export function pullRequestPolicyView(runnerConfig: unknown): {
  landing_mode: LandingMode;
  pull_requests: PullRequestPolicy | null;
} {
  const settings = storedLandingSettings(runnerConfig);
  if (settings === null) {
    const landing = (runnerConfig as { landing?: { mode?: unknown } } | null)?.landing;
    return { landing_mode: landing?.mode === "pull_request" ? "pull_request" : "push", pull_requests: null };
  }
  if (settings.mode === "push") return { landing_mode: "push", pull_requests: null };
  const { forge, pullRequest } = settings;
  return {
    landing_mode: "pull_request",
    pull_requests: {
      forge: forge.kind,
      forge_url: forge.url,
      repository: forge.repository,
      merge: pullRequest.merge,
      merge_method: pullRequest.mergeMethod,
      required_approvals: pullRequest.requiredApprovals,
      required_checks: [...pullRequest.requiredChecks],
      prerequisites: pullRequest.prerequisites,
      on_closed: pullRequest.onClosed,
    },
  };
}

type LandingSettings = ReturnType<typeof landingSettingsOf>;

/** Distinct stored configs whose landing settings are remembered; past it the memo starts over. */
const MEMO_ENTRIES = 256;
/** Landing settings (frozen) of stored configs by their JSON text; null: the config does not parse. */
const memo = new Map<string, LandingSettings | null>();

/**
 * The landing settings of a stored runner config, parsed once per distinct config: every
 * status answer shows them, and a project's status is read again after each of its
 * transitions, while its config rarely changes. The schema's parse costs a few times the
 * JSON text the memo is keyed by (~3 % of a busy gateway's CPU under the scale bench's probe).
 */
function storedLandingSettings(runnerConfig: unknown): LandingSettings | null {
  const key = JSON.stringify(runnerConfig) ?? "";
  const known = memo.get(key);
  if (known !== undefined) return known;
  let settings: LandingSettings | null;
  try {
    settings = landingSettingsOf(parseRunnerConfig(runnerConfig, "stored runner config"));
  } catch {
    settings = null;
  }
  if (memo.size >= MEMO_ENTRIES) memo.clear();
  memo.set(key, settings);
  return settings;
}
