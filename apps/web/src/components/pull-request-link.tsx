import type { Task } from "../api/types.ts";

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
