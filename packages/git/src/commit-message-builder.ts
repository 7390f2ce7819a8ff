import { GitInputError } from "./git-error.ts";

/**
 * Builds the exact bytes of a commit message: the agent's message, one blank line, then a
 * trailer block git itself recognises (`git interpret-trailers --parse` returns it).
 *
 * The message is kept as written except for line endings (CRLF → LF), leading blank lines and
 * trailing whitespace at the end, which git would strip anyway. The commit is then made with
 * `--cleanup=verbatim`, so what this returns is what the commit object holds.
 *
 * Forged trailers. The message is the agent's text, so it must never decide which trailers
 * git reads (`git interpret-trailers`, `%(trailers)` of `git log --format`). Git reads the last
 * paragraph before the end of the message, and ends the message early at two kinds of line:
 * - the patch divider: the first line that starts with `---` followed by whitespace or the line
 *   end. A body line like that is indented by one space;
 * - the scissors line: the comment string (core.commentChar / core.commentString, `#` unless
 *   the reader's repository sets another), a space and `------------------------ >8
 *   ------------------------` (24 dashes each side). Everything from it on is dropped, trailers
 *   included. Whatever comment string a reader uses, it is followed by a space and those 24
 *   dashes, so every run of 24 dashes after a space and before ` >8 ` gets one more dash: the
 *   line reads the same, and no comment string makes it a scissors line.
 * Comment lines (which git skips) and trailer-like lines in the body cannot end the message, and
 * Overseer's block follows them after a blank line, so it is always the last paragraph git sees:
 * `Task: … / Agent: … / Status: …` lines the agent wrote stay plain text in the body.
 *
 * Trailer order: the trailer keys of docs/architecture.md (Git) first in their fixed order `Task, Agent, Role, Action,
 * Status` (whatever the object's key order), then any other keys in insertion order. Values are
 * single-line: embedded line breaks are folded into spaces so a value can never start a new
 * trailer or end the block.
 */

export const STANDARD_TRAILER_ORDER = ["Task", "Agent", "Role", "Action", "Status"] as const;

/** A line git takes as the end of the message when it looks for trailers (see above). */
const DIVIDER_LINE = /^---(?=\s|$)/gm;
/** The first dashes of git's scissors line, whatever comment string precedes them (see above). */
const SCISSORS_DASHES = /(?<= )-{24}(?= >8 -{24})/g;

const TRAILER_KEY = /^[A-Za-z0-9][A-Za-z0-9-]*$/;

export function buildCommitMessage(message: string, trailers: Record<string, string>): string {
  if (typeof message !== "string") {
    throw new GitInputError("message", `expected a string, received ${typeof message}`);
  }
  if (message.includes("\0")) throw new GitInputError("message", "contains a NUL byte; remove it");
  const body = message
    .replace(/\r\n?/g, "\n")
    .replace(/^(?:[ \t]*\n)+/, "")
    .replace(/\s+$/, "")
    .replace(DIVIDER_LINE, " $&")
    .replace(SCISSORS_DASHES, "-$&");
  if (body === "") {
    throw new GitInputError(
      "message",
      "is empty; a commit needs the agent's message (a subject line at least)",
    );
  }

  const keys = Object.keys(trailers);
  const ordered = [
    ...STANDARD_TRAILER_ORDER.filter((key) => keys.includes(key)),
    ...keys.filter((key) => !(STANDARD_TRAILER_ORDER as readonly string[]).includes(key)),
  ];
  const lines: string[] = [];
  for (const key of ordered) {
    if (!TRAILER_KEY.test(key)) {
      throw new GitInputError(
        `trailers.${key}`,
        'a trailer key must be letters, digits and \'-\' (e.g. "Task", "Co-authored-by")',
      );
    }
    const raw = trailers[key];
    if (typeof raw !== "string") {
      throw new GitInputError(`trailers.${key}`, `expected a string value, received ${typeof raw}`);
    }
    const value = raw.replace(/[\0\r\n]+/g, " ").trim();
    if (value === "")
      throw new GitInputError(`trailers.${key}`, "is empty; give a value or leave the key out");
    lines.push(`${key}: ${value}`);
  }
  return lines.length === 0 ? `${body}\n` : `${body}\n\n${lines.join("\n")}\n`;
}
