/**
 * The part of a pull request's body Overseer owns: between `<!-- overseer:KEY -->` and
 * `<!-- /overseer:KEY -->`. Updating the body replaces only that part, so text people add
 * above or below survives; finding a task's pull request looks for the opening marker, so a
 * pull request someone else opened from the same branch is never taken over.
 */

function open(key: string): string {
  return `<!-- overseer:${key} -->`;
}

function close(key: string): string {
  return `<!-- /overseer:${key} -->`;
}

/** Whether `body` holds the marker `key`. */
export function hasMarker(body: string, key: string): boolean {
  return body.includes(open(key));
}

/**
 * `body` with Overseer's part set to `content`: replaced in place when the marker is there,
 * else appended after what is already there.
 */
export function withMarkedContent(body: string, key: string, content: string): string {
  const section = `${open(key)}\n${content.trim()}\n${close(key)}`;
  const start = body.indexOf(open(key));
  const end = body.indexOf(close(key));
  if (start !== -1 && end > start)
    return body.slice(0, start) + section + body.slice(end + close(key).length);
  return body.trim() ? `${body.trimEnd()}\n\n${section}` : section;
}

/**
 * Of the open pull requests from one branch, the one whose body holds the marker `key`; null
 * when there is none at all. An open one without the marker was opened by someone else, and
 * taking it over would overwrite their work: `refuse` makes the error naming it.
 */
export function ownedOpenPull<T>(
  open: readonly T[],
  key: string,
  bodyOf: (pull: T) => string | null | undefined,
  refuse: (theirs: T) => Error,
): T | null {
  const ours = open.find((pull) => hasMarker(bodyOf(pull) ?? "", key));
  if (ours) return ours;
  const theirs = open[0];
  if (theirs) throw refuse(theirs);
  return null;
}
