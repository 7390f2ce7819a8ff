import type { CheckState, ReviewState, ReviewThread } from "@overseer/forge";
import { describe, expect, it } from "vitest";
import { routeDelivery } from "../src/forge/delivery-route.ts";
import { checksGate, humanReview } from "../src/forge/review-reading.ts";

const check = (name: string, conclusion: CheckState["conclusion"]): CheckState => ({
  name,
  conclusion,
  url: null,
  source: "check_run",
  jobId: null,
});
const review = (
  author: string,
  verdict: ReviewState["verdict"],
  commitSha = "h2",
  body = "",
): ReviewState => ({
  id: 1,
  author,
  verdict,
  body,
  commitSha,
  submittedAt: null,
});
const thread = (authors: string[], resolved = false): ReviewThread => ({
  id: "t",
  path: "src/a.ts",
  line: 3,
  resolved,
  comments: authors.map((author, i) => ({ id: i, author, body: `c${i}`, createdAt: "2026-01-01T00:00:00Z" })),
});

describe("checksGate", () => {
  it("gates on the required checks only, and on every reported check when none is required", () => {
    expect(checksGate([check("ci", "success"), check("lint", "failure")], ["ci"]).state).toBe("success");
    expect(checksGate([check("ci", "success"), check("lint", "failure")], []).state).toBe("failure");
    expect(checksGate([check("ci", "pending")], []).state).toBe("pending");
  });
  it("is pending while a required check has not reported, or when nothing reported at all", () => {
    expect(checksGate([check("lint", "success")], ["ci"]).state).toBe("pending");
    expect(checksGate([], []).state).toBe("pending");
    expect(checksGate([check("ci", "cancelled")], ["ci"]).failing.map((c) => c.name)).toEqual(["ci"]);
  });
});

describe("humanReview", () => {
  it("counts each person's latest verdict on the approved head, never Overseer's own or an older head's", () => {
    const seen = humanReview(
      "bot",
      "h2",
      [
        review("alice", "changes_requested"),
        review("alice", "approved"),
        review("bob", "commented"),
        review("carol", "changes_requested", "h1"),
        review("BOT", "approved"),
      ],
      [],
      [],
    );
    expect(seen).toEqual({ approvals: 1, changesRequested: false, threads: [], comments: [] });
  });
  it("keeps unresolved threads whose last word is a person's, and comments addressing Overseer after its last one", () => {
    const seen = humanReview(
      "bot",
      "h2",
      [review("alice", "changes_requested", "h2", "Two things.")],
      [
        thread(["alice"]),
        thread(["alice", "bot"]),
        thread(["alice"], true),
        thread(["alice", "bot", "alice"]),
      ],
      [
        { id: 1, author: "alice", body: "@bot old question", createdAt: "" },
        { id: 2, author: "bot", body: "Overseer pushed h2", createdAt: "" },
        { id: 3, author: "dave", body: "unrelated chatter", createdAt: "" },
        { id: 4, author: "alice", body: "Overseer, also update the changelog", createdAt: "" },
      ],
    );
    expect(seen.changesRequested).toBe(true);
    expect(seen.threads.map((t) => t.comments.length)).toEqual([1, 3]);
    expect(seen.comments).toEqual([
      { author: "alice", body: "Two things." },
      { author: "alice", body: "Overseer, also update the changelog" },
    ]);
  });
});

const REPO = "acme/app";

describe("routeDelivery", () => {
  it("routes by head branch, issue number or head sha, per forge", () => {
    expect(routeDelivery("github", { pull_request: { head: { ref: "overseer/pr/T-1" } } }, REPO)).toEqual({
      by: "branch",
      branch: "overseer/pr/T-1",
    });
    expect(routeDelivery("github", { issue: { number: 7, pull_request: {} } }, REPO)).toEqual({
      by: "number",
      number: 7,
    });
    expect(routeDelivery("github", { issue: { number: 7 } }, REPO)).toBeNull();
    expect(routeDelivery("github", { check_run: { head_sha: "abc", pull_requests: [] } }, REPO)).toEqual({
      by: "sha",
      sha: "abc",
    });
    expect(routeDelivery("github", { sha: "def", state: "success" }, REPO)).toEqual({
      by: "sha",
      sha: "def",
    });
    expect(
      routeDelivery(
        "gitlab",
        { object_kind: "merge_request", object_attributes: { source_branch: "b" } },
        REPO,
      ),
    ).toEqual({
      by: "branch",
      branch: "b",
    });
    expect(
      routeDelivery("gitlab", { object_kind: "note", merge_request: { source_branch: "b2" } }, REPO),
    ).toEqual({
      by: "branch",
      branch: "b2",
    });
    expect(routeDelivery("gitea", { issue: { number: 3 } }, REPO)).toEqual({ by: "number", number: 3 });
  });

  it("routes nowhere a delivery about another repository (an organisation or group webhook)", () => {
    // As GitHub's recorded pull_request delivery names them (@octokit/webhooks-examples).
    const opened = {
      action: "opened",
      pull_request: { head: { ref: "changes" } },
      repository: { full_name: "Codertocat/Hello-World" },
    };
    expect(routeDelivery("github", opened, "codertocat/hello-world")).toEqual({
      by: "branch",
      branch: "changes",
    });
    expect(routeDelivery("github", opened, REPO)).toBeNull();
    const note = {
      object_kind: "note",
      project: { path_with_namespace: "acme/platform/app" },
      merge_request: { source_branch: "b" },
    };
    expect(routeDelivery("gitlab", note, "acme/platform/app")).toEqual({ by: "branch", branch: "b" });
    expect(routeDelivery("gitlab", note, "acme/platform/other")).toBeNull();
    const status = { sha: "abc", repository: { full_name: "acme/app" } };
    expect(routeDelivery("gitea", status, REPO)).toEqual({ by: "sha", sha: "abc" });
    expect(routeDelivery("gitea", status, "acme/web")).toBeNull();
  });
});
