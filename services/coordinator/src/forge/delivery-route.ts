/**
 * Which task a stored webhook delivery is about (pure): the head branch of the pull request it
 * names, else its number, else the commit sha a check or status was reported on. The runner
 * then syncs that task, so the payload itself is never trusted beyond routing: what Overseer
 * records is what the forge's API answers. A delivery about another repository than the
 * project's (an organisation or group webhook sends every repository's events) routes nowhere,
 * so a task whose branch has the same name in another repository is not synced for it.
 */
export type DeliveryRoute =
  | { readonly by: "branch"; readonly branch: string }
  | { readonly by: "number"; readonly number: number }
  | { readonly by: "sha"; readonly sha: string };

export function routeDelivery(
  forge: "github" | "gitlab" | "gitea",
  payload: unknown,
  repository: string,
): DeliveryRoute | null {
  const p = record(payload);
  const about = deliveryRepository(forge, p);
  if (about !== null && about.toLowerCase() !== repository.toLowerCase()) return null;
  if (forge === "gitlab") {
    const attributes = record(p.object_attributes);
    const mr = record(p.merge_request);
    const branch =
      str(mr.source_branch) ?? (p.object_kind === "merge_request" ? str(attributes.source_branch) : null);
    if (branch) return { by: "branch", branch };
    const sha = str(attributes.sha) ?? str(p.checkout_sha);
    return sha ? { by: "sha", sha } : null;
  }
  const pull = record(p.pull_request);
  const head = str(record(pull.head).ref);
  if (head) return { by: "branch", branch: head };
  const issue = record(p.issue);
  if (typeof issue.number === "number" && (issue.pull_request !== undefined || forge === "gitea")) {
    return { by: "number", number: issue.number };
  }
  for (const key of ["check_run", "check_suite", "workflow_run", "workflow_job"]) {
    const run = record(p[key]);
    const pulls = Array.isArray(run.pull_requests) ? run.pull_requests : [];
    const ref = str(record(record(pulls[0]).head).ref);
    if (ref) return { by: "branch", branch: ref };
    const sha = str(run.head_sha);
    if (sha) return { by: "sha", sha };
  }
  const sha = str(p.sha);
  return sha ? { by: "sha", sha } : null;
}

/** The repository a delivery is about, as the forge names it (`owner/name`, GitLab's full path); `null` when it names none. */
function deliveryRepository(forge: "github" | "gitlab" | "gitea", p: Record<string, unknown>): string | null {
  if (forge === "gitlab") return str(record(p.project).path_with_namespace);
  return str(record(p.repository).full_name);
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function str(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}
