/**
 * How every adapter opens, adopts and finds a task's pull request, written once over a small
 * per-forge port: look for the open one Overseer owns for the head (the marker in its body; an
 * open one without it was opened by someone else and is refused), update it when the draft
 * changed, else create it; a create whose answer was lost and that the forge refuses when
 * repeated (GitHub 422, GitLab/Gitea 409) adopts the pull request the first one made.
 */
import type { EnsuredPullRequest, ForgeKind, PullRequestDraft, PullRequestState } from "./forge-adapter.ts";
import { ForgeError } from "./forge-errors.ts";
import { hasMarker, ownedOpenPull, withMarkedContent } from "./pull-request-marker.ts";

/** What the template reads of a forge's pull request. */
export interface PullView {
  /** `Pull request #3`, `Merge request !3`: how the forge names it in a message. */
  readonly name: string;
  readonly title: string;
  readonly body: string | null | undefined;
  readonly base: string;
  readonly labels: readonly string[];
}

/** A change to write: the new title, body and base, and the labels to add (never removed). */
export interface PullChange {
  readonly title: string;
  readonly body: string;
  readonly base: string;
  /** Whether title, body or base differ from what the forge has. */
  readonly fieldsChanged: boolean;
  readonly addLabels: readonly string[];
}

export interface PullPort<P> {
  readonly forge: ForgeKind;
  /** The status the forge answers a repeated create with; also the status of the refusal of someone else's pull request. */
  readonly conflictStatus: number;
  /** The open pull requests from `head`, whoever opened them. */
  listOpen(head: string): Promise<readonly P[]>;
  /** The newest pull request from `head`, any status, that `accept` takes; `null` when none. */
  findFrom(head: string, accept: (pull: P) => boolean): Promise<P | null>;
  view(pull: P): PullView;
  create(draft: PullRequestDraft, body: string): Promise<P>;
  edit(pull: P, change: PullChange): Promise<P>;
  /** The forge's status of a failed request (`null` when it gave none). */
  statusOf(error: unknown): number | null;
  toState(pull: P): PullRequestState;
}

export async function ensurePull<P>(port: PullPort<P>, draft: PullRequestDraft): Promise<EnsuredPullRequest> {
  const existing = await openOwned(port, draft.head, draft.marker);
  if (existing) return update(port, existing, draft);
  if (draft.number !== undefined && draft.number !== null) {
    // Recorded, and no longer open: closed or merged since the caller read its record.
    const ours = await port.findFrom(draft.head, (pull) =>
      hasMarker(port.view(pull).body ?? "", draft.marker),
    );
    if (ours) return { pullRequest: port.toState(ours), outcome: "unchanged" };
  }
  try {
    const created = await port.create(draft, withMarkedContent("", draft.marker, draft.body));
    return { pullRequest: port.toState(created), outcome: "created" };
  } catch (error) {
    // A create that reached the forge but whose answer was lost, then retried: the first one stands.
    if (port.statusOf(error) !== port.conflictStatus) throw error;
    const raced = await openOwned(port, draft.head, draft.marker);
    if (!raced) throw error;
    return update(port, raced, draft);
  }
}

export async function findPull<P>(
  port: PullPort<P>,
  head: string,
  marker: string,
): Promise<PullRequestState | null> {
  const ours = await port.findFrom(head, (pull) => hasMarker(port.view(pull).body ?? "", marker));
  return ours ? port.toState(ours) : null;
}

async function openOwned<P>(port: PullPort<P>, head: string, marker: string): Promise<P | null> {
  return ownedOpenPull(
    await port.listOpen(head),
    marker,
    (pull) => port.view(pull).body,
    (theirs) =>
      new ForgeError(
        port.forge,
        "conflict",
        `${port.view(theirs).name} from ${head} was not opened by Overseer (no marker ${marker} in its body); close it or rename the branch.`,
        port.conflictStatus,
      ),
  );
}

async function update<P>(port: PullPort<P>, pull: P, draft: PullRequestDraft): Promise<EnsuredPullRequest> {
  const current = port.view(pull);
  const body = withMarkedContent(current.body ?? "", draft.marker, draft.body);
  const addLabels = (draft.labels ?? []).filter((label) => !current.labels.includes(label));
  const fieldsChanged =
    current.title !== draft.title || (current.body ?? "") !== body || current.base !== draft.base;
  if (!fieldsChanged && addLabels.length === 0)
    return { pullRequest: port.toState(pull), outcome: "unchanged" };
  const edited = await port.edit(pull, {
    title: draft.title,
    body,
    base: draft.base,
    fieldsChanged,
    addLabels,
  });
  return { pullRequest: port.toState(edited), outcome: "updated" };
}
