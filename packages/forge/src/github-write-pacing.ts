/**
 * How far apart GitHub writes go (`OVERSEER_GITHUB_WRITE_INTERVAL_MS`), as Octokit's throttling
 * plugin takes it: its `write` Bottleneck group, one write (POST/PATCH/PUT/DELETE, and every
 * GraphQL request) at a time per throttling id, at least the interval apart; and its
 * `notifications` group, the writes that notify people (a pull request, a comment, a review, a
 * merge) at least three intervals apart, the plugin's own ratio (1 s and 3 s by default). GitHub
 * asks for at least a second between writes on github.com; an Enterprise Server has rate limits
 * off by default and its admins set their own, so the interval is a setting (0: no pacing).
 *
 * Like the plugin's own groups, one pair per interval is shared by every adapter of the process,
 * made when first asked for: two adapters of one token (one throttling id) pace together. The
 * issues adapter (@overseer/intake) takes its groups from here too (`@overseer/forge/github-write-pacing`).
 */
import Bottleneck from "bottleneck";

/** GitHub's guidance for github.com: at least one second between writes. */
const GITHUB_WRITE_INTERVAL_MS = 1000;
/** The plugin paces writes that notify people three times as far apart as other writes. */
const NOTIFYING_WRITE_FACTOR = 3;
/** A throttling id's limiter is dropped after this long unused (the plugin's default). */
const IDLE_EXPIRY_MS = 120_000;

interface GitHubWriteGroups {
  readonly write: Bottleneck.Group;
  readonly notifications: Bottleneck.Group;
}

const groupsByInterval = new Map<number, GitHubWriteGroups>();

/** The shared write and notification groups of `intervalMs`, for Octokit's `throttle` option. */
export function githubWriteGroups(intervalMs: number = GITHUB_WRITE_INTERVAL_MS): GitHubWriteGroups {
  if (!Number.isInteger(intervalMs) || intervalMs < 0)
    throw new RangeError(
      `the GitHub write interval must be a whole number of ms from 0, received ${String(intervalMs)}; ` +
        "set OVERSEER_GITHUB_WRITE_INTERVAL_MS to e.g. 1000 (github.com) or 0 (no pacing)",
    );
  let groups = groupsByInterval.get(intervalMs);
  if (groups === undefined) {
    const group = (id: string, minTime: number) =>
      new Bottleneck.Group({ id: `${id}-${intervalMs}`, maxConcurrent: 1, minTime, timeout: IDLE_EXPIRY_MS });
    groups = {
      write: group("overseer-github-write", intervalMs),
      notifications: group("overseer-github-notifications", intervalMs * NOTIFYING_WRITE_FACTOR),
    };
    groupsByInterval.set(intervalMs, groups);
  }
  return groups;
}
