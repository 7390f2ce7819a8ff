/**
 * Which head each GitLab verdict was given on (pure). GitLab says who approves a merge request
 * now (approvals API) and which reviewers asked for changes (reviewers API), but not on which
 * commit: each leaves a system note when given ("approved this merge request", "requested
 * changes"), and each push to the source branch leaves a diff version (`…/versions`, with its
 * head and time). A verdict belongs to the newest version created before its latest note, as a
 * GitHub review belongs to its `commit_id`; one whose note cannot be found is on no known head
 * (`commitSha: null`), so it never counts for a head it was not given on.
 */
import type { ReviewState, ReviewVerdict } from "./forge-adapter.ts";

export interface GitLabVerdict {
  readonly userId: number;
  readonly author: string;
  readonly verdict: ReviewVerdict;
}

export interface GitLabNoteTime {
  readonly author: string;
  readonly body: string;
  readonly createdAt: string;
  readonly system: boolean;
}

export interface GitLabVersion {
  readonly headSha: string;
  readonly createdAt: string;
}

const NOTE_OF: Partial<Record<ReviewVerdict, RegExp>> = {
  approved: /^approved this merge request\b/i,
  changes_requested: /^requested changes\b/i,
};

export function attributeVerdicts(
  verdicts: readonly GitLabVerdict[],
  notes: readonly GitLabNoteTime[],
  versions: readonly GitLabVersion[],
): ReviewState[] {
  const byTime = [...versions].sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
  return verdicts.map((v): ReviewState => {
    const pattern = NOTE_OF[v.verdict];
    const note = pattern
      ? notes
          .filter((n) => n.system && n.author === v.author && pattern.test(n.body.trim()))
          .reduce<GitLabNoteTime | null>(
            (latest, n) => (latest && Date.parse(latest.createdAt) >= Date.parse(n.createdAt) ? latest : n),
            null,
          )
      : null;
    const at = note ? Date.parse(note.createdAt) : Number.NaN;
    const version = Number.isNaN(at) ? undefined : byTime.find((ver) => Date.parse(ver.createdAt) <= at);
    return {
      id: v.userId,
      author: v.author,
      verdict: v.verdict,
      body: "",
      commitSha: version?.headSha ?? null,
      submittedAt: note?.createdAt ?? null,
    };
  });
}
