import { COORDINATOR_DEFAULTS } from "./coordinator-defaults.ts";
import { integer, MS_MAX } from "./setting-value-schemas.ts";

/** How a coordinator talks to the forges (README "Land through pull requests"): how much at once, its backoff, its GitHub pacing. */
export const FORGE_SPECS = {
  forgeConcurrency: {
    name: "OVERSEER_FORGE_CONCURRENCY",
    fallback: String(COORDINATOR_DEFAULTS.forgeConcurrency),
    description:
      "Forge jobs (open or update a pull request, read its checks and reviews, apply a webhook delivery, merge) one coordinator runs at the same time, for every pull_request project it owns.",
    schema: integer(1, 256),
  },
  forgeRetryBaseMs: {
    name: "OVERSEER_FORGE_RETRY_BASE_MS",
    fallback: String(COORDINATOR_DEFAULTS.forgeRetryBaseMs),
    description:
      "Backoff unit of a forge request that got a 5xx (GitHub: n² × this before retry n; GitLab and Gitea: doubled each retry). Rate limits wait what the forge says (Retry-After, rate-limit reset).",
    schema: integer(0, MS_MAX),
  },
  githubWriteIntervalMs: {
    name: "OVERSEER_GITHUB_WRITE_INTERVAL_MS",
    fallback: String(COORDINATOR_DEFAULTS.githubWriteIntervalMs),
    description:
      "Least time between two writes (POST, PATCH, PUT, DELETE, and GraphQL requests) of one GitHub token in a process, the coordinator's pull requests and issue status alike; writes that notify people (a pull request, a comment, a review, a merge) go three times this apart. The default follows GitHub's guidance for github.com (at least a second between writes). A GitHub Enterprise Server has rate limits off unless its admins set them: lower it to what they allow, or 0 for no pacing. Rate limits GitHub answers (403/429 and Retry-After) are still waited as GitHub says.",
    schema: integer(0, MS_MAX),
  },
};
