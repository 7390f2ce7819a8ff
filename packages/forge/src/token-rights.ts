/**
 * What each right is for and how to grant it on each forge: the words `doctor` prints when a
 * token lacks one, and the README's "Land through pull requests" table.
 */
import type { ForgeKind, ForgeRight } from "./forge-adapter.ts";

export const FORGE_RIGHTS: readonly ForgeRight[] = ["read", "push", "pull_requests", "checks_read", "merge"];

const PURPOSE: Record<ForgeRight, string> = {
  read: "read the repository",
  push: "push task branches",
  pull_requests: "open and update pull requests",
  checks_read: "read checks and statuses of a head",
  merge: "merge approved, green pull requests",
};

export const RIGHT_GRANTS: Record<ForgeKind, Record<ForgeRight, string>> = {
  github: {
    read: "Metadata: read and Contents: read (fine-grained token or App), on this repository",
    push: "Contents: read and write",
    pull_requests: "Pull requests: read and write",
    checks_read: "Checks: read and Commit statuses: read (Actions: read for job logs)",
    merge: "Contents: read and write (and a role branch protection lets merge)",
  },
  gitlab: {
    read: "a project or group access token with scope read_api on this project",
    push: "scope write_repository and role Developer (or what the protected branch allows)",
    pull_requests: "scope api, role Developer",
    checks_read: "scope read_api (pipelines and job traces)",
    merge: "scope api and a role the protected target branch allows to merge (Maintainer by default)",
  },
  gitea: {
    read: "token scope read:repository and collaborator access to this repository",
    push: "token scope write:repository and Write access to this repository",
    pull_requests:
      "token scopes write:repository and write:issue (labels, conversation comments) and Write access",
    checks_read: "token scope read:repository (commit statuses)",
    merge: "token scope write:repository and a role the protected branch lets merge",
  },
};

/** One sentence per missing right: what it is for and what to grant. */
export function rightsAdvice(forge: ForgeKind, missing: readonly ForgeRight[]): string[] {
  return missing.map(
    (right) => `${right}: needed to ${PURPOSE[right]}; grant ${RIGHT_GRANTS[forge][right]}.`,
  );
}
