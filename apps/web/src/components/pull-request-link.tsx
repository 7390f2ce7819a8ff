import { client } from "../api/client.ts";
import type { Project, Task } from "../api/types.ts";
import { useLoad } from "../lib/hooks.ts";

type PullRequest = NonNullable<Task["pull_request"]>;

/** The PR's number (linked once the forge opened it), its state, checks and review, in one line. */
export function PullRequestLink({ pr }: { pr: PullRequest }) {
  const name = pr.number === null ? pr.branch : `#${pr.number}`;
  const parts = [pullRequestState(pr), `checks ${pr.checks}`, reviewText(pr)].filter((p) => p !== "");
  return (
    <span class="pr-link" data-testid="pull-request">
      {pr.url ? (
        <a href={pr.url} target="_blank" rel="noreferrer">
          PR {name}
        </a>
      ) : (
        <>PR {name}</>
      )}{" "}
      <span class="muted">
        → {pr.base} · {parts.join(" · ")}
      </span>
    </span>
  );
}

function pullRequestState(pr: PullRequest): string {
  if (pr.status === "merged") return pr.merged_by ? `merged by ${pr.merged_by}` : "merged";
  return pr.status;
}

function reviewText(pr: PullRequest): string {
  if (pr.review === "changes_requested") return "changes requested";
  if (pr.review === "approved") return `approved (${pr.approvals})`;
  return pr.approvals > 0 ? `${pr.approvals} approval${pr.approvals === 1 ? "" : "s"}` : "";
}

type Policy = NonNullable<Project["pull_requests"]>;

/** The merge policy in words (the same words as `overseer status`, @overseer/api-contract mergePolicyText). */
function mergePolicyText(p: Policy): string {
  const checks = p.required_checks.length === 0 ? "every check" : `checks ${p.required_checks.join(", ")}`;
  const approvals = `${p.required_approvals} approval${p.required_approvals === 1 ? "" : "s"}`;
  if (p.merge === "manual") return "merge: manual (a person merges on the forge)";
  if (p.merge === "queue")
    return `merge: queue (the forge's auto-merge or merge queue, by ${p.merge_method})`;
  return `merge: auto by ${p.merge_method} once ${approvals} and ${checks} green`;
}

/** Where the pull requests live and who merges them: "github https://github.com (acme/app) · merge: …". */
export function MergePolicy({ policy }: { policy: Policy }) {
  return (
    <span data-testid="merge-policy">
      {policy.forge} <a href={policy.forge_url}>{policy.forge_url}</a> ({policy.repository}) ·{" "}
      {mergePolicyText(policy)}
    </span>
  );
}

/** The task view's merge policy line: reads the project (its policy is per project). */
export function ProjectMergePolicy({ projectId }: { projectId: string }) {
  const project = useLoad(() => client.project(projectId), `project:${projectId}`);
  const policy = project.data?.pull_requests ?? null;
  return policy ? (
    <div class="muted small">
      <MergePolicy policy={policy} />
    </div>
  ) : null;
}
