/**
 * The JQL the Jira double understands: clauses joined by AND over `project`, `labels`,
 * `assignee`, `status`, `statusCategory` and `updated`, with `=`, `!=`, `IN`, `NOT IN`, `>=`, `>`,
 * and `currentUser()`; then `ORDER BY`. A clause outside this is thrown as a violation, never
 * silently matched. `updated` dates are read in the searching user's time zone, as Jira does.
 */

export interface JqlIssueView {
  readonly project: string;
  readonly labels: readonly string[];
  readonly assignee: string | null;
  readonly status: string;
  readonly statusCategory: string;
  /** ms since the epoch. */
  readonly updated: number;
}

interface Clause {
  readonly field: string;
  readonly op: string;
  readonly values: string[];
}

const CLAUSE = /^\s*(\w+)\s*(NOT IN|IN|!=|>=|>|=)\s*(\([^)]*\)|"(?:[^"\\]|\\.)*"|[\w.()-]+)\s*$/i;

function unquote(value: string): string {
  const trimmed = value.trim();
  return trimmed.startsWith('"') ? JSON.parse(trimmed) : trimmed;
}

export function parseJql(jql: string): Clause[] {
  const [where = ""] = jql.split(/\s+ORDER BY\s+/i);
  if (where.trim() === "") return [];
  return where.split(/\s+AND\s+/i).map((text) => {
    const match = CLAUSE.exec(text);
    if (!match) throw new Error(`the Jira double does not understand the JQL clause "${text}"`);
    const [, field = "", op = "", raw = ""] = match;
    const values = raw.startsWith("(")
      ? raw
          .slice(1, -1)
          .split(",")
          .map((v) => unquote(v))
      : [unquote(raw)];
    return { field: field.toLowerCase(), op: op.toUpperCase(), values };
  });
}

/** "yyyy/MM/dd HH:mm" in `timeZone` → ms since the epoch. */
export function zonedMinute(text: string, timeZone: string): number {
  const match = /^(\d{4})[/-](\d{2})[/-](\d{2})(?: (\d{2}):(\d{2}))?$/.exec(text);
  if (!match) throw new Error(`the Jira double does not understand the JQL date "${text}"`);
  const [, y, mo, d, h = "00", mi = "00"] = match;
  const guess = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi));
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
  }).formatToParts(guess);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const shown = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"));
  return guess - (shown - guess);
}

export function matchesJql(
  issue: JqlIssueView,
  clauses: readonly Clause[],
  me: { accountId: string; timeZone: string },
): boolean {
  return clauses.every(({ field, op, values }) => {
    const resolved = values.map((v) => (v.toLowerCase() === "currentuser()" ? me.accountId : v));
    if (field === "updated") {
      const at = zonedMinute(resolved[0] ?? "", me.timeZone);
      if (op === ">=") return issue.updated >= at;
      if (op === ">") return issue.updated > at;
      throw new Error(`the Jira double does not understand updated ${op}`);
    }
    const have: readonly (string | null)[] =
      field === "labels"
        ? issue.labels
        : field === "project"
          ? [issue.project]
          : field === "assignee"
            ? [issue.assignee]
            : field === "status"
              ? [issue.status]
              : field === "statuscategory"
                ? [issue.statusCategory]
                : (() => {
                    throw new Error(`the Jira double does not understand the JQL field "${field}"`);
                  })();
    const hit = have.some((h) => h !== null && resolved.some((v) => v.toLowerCase() === h.toLowerCase()));
    if (op === "=" || op === "IN") return hit;
    if (op === "!=" || op === "NOT IN") return !hit;
    throw new Error(`the Jira double does not understand ${field} ${op}`);
  });
}
