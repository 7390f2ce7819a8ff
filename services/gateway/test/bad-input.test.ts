import { describe, expect, it } from "vitest";
import { type RequestOptions, useGatewayFixture, useRaisedQuestion } from "./support/gateway-fixture.ts";
import { stateSignature } from "./support/state-signature.ts";

const fx = useGatewayFixture();
const q = useRaisedQuestion(fx, "bad");

interface BadCase {
  name: string;
  method: string;
  path: string | (() => string);
  init?: RequestOptions;
  /** Exact status expected; any 4xx when omitted. */
  status?: number;
  /** A substring the error message must contain (the field it names). */
  mentions?: string;
}

const resolvePath = () => `/api/projects/bad/decisions/${q.decisionId}/resolve`;
const answerPath = () => `/api/projects/bad/backlog/${q.resolverId}/answer`;
const json = (body: unknown): RequestOptions => ({ body });
const raw = (rawBody: string, type?: string): RequestOptions => ({
  rawBody,
  headers: type ? { "Content-Type": type } : {},
});
const HUGE = "x".repeat(1_048_576 + 10);

const CASES: BadCase[] = [
  // Malformed or mistyped bodies
  {
    name: "malformed JSON",
    method: "POST",
    path: resolvePath,
    init: raw('{"option_id": ', "application/json"),
    status: 400,
  },
  {
    name: "JSON null body",
    method: "POST",
    path: resolvePath,
    init: raw("null", "application/json"),
    status: 400,
  },
  {
    name: "JSON array body",
    method: "POST",
    path: "/api/projects/bad/message",
    init: json(["text"]),
    status: 400,
  },
  {
    name: "JSON number body",
    method: "POST",
    path: answerPath,
    init: raw("42", "application/json"),
    status: 400,
  },
  {
    name: "option_id of the wrong type",
    method: "POST",
    path: resolvePath,
    init: json({ option_id: 5 }),
    status: 400,
    mentions: "option_id",
  },
  {
    name: "option_id missing",
    method: "POST",
    path: resolvePath,
    init: json({ note: "x" }),
    status: 400,
    mentions:
      "option_id: expected an option id from the card's options (or custom), received nothing (missing)",
  },
  {
    name: "option_id empty",
    method: "POST",
    path: resolvePath,
    init: json({ option_id: "" }),
    status: 400,
    mentions: "option_id",
  },
  {
    name: "option_id too long",
    method: "POST",
    path: resolvePath,
    init: json({ option_id: "a".repeat(500) }),
    status: 400,
    mentions: "option_id",
  },
  {
    name: "note of the wrong type",
    method: "POST",
    path: resolvePath,
    init: json({ option_id: "custom", note: { a: 1 } }),
    status: 400,
    mentions: "note",
  },
  {
    name: "answer without text",
    method: "POST",
    path: answerPath,
    init: json({}),
    status: 400,
    mentions: "text",
  },
  {
    name: "answer with empty text",
    method: "POST",
    path: answerPath,
    init: json({ text: "" }),
    status: 400,
    mentions: "text",
  },
  {
    name: "answer with blank text",
    method: "POST",
    path: answerPath,
    init: json({ text: "  \n " }),
    status: 400,
    mentions: "text",
  },
  {
    name: "answer text of the wrong type",
    method: "POST",
    path: answerPath,
    init: json({ text: ["a"] }),
    status: 400,
    mentions: "text",
  },
  {
    name: "message text too long",
    method: "POST",
    path: "/api/projects/bad/message",
    init: json({ text: "y".repeat(60_000) }),
    status: 400,
    mentions: "text",
  },
  {
    name: "release without reason",
    method: "POST",
    path: () => `/api/v1/projects/bad/tasks/${q.resolverId}/release-external`,
    init: json({}),
    status: 400,
    mentions: "reason",
  },
  { name: "huge body", method: "POST", path: answerPath, init: json({ text: HUGE }), status: 413 },
  {
    name: "huge import body",
    method: "POST",
    path: "/api/v1/projects/bad/tasks/import",
    init: raw(`[${'"x",'.repeat(300_000)}"x"]`, "application/json"),
    status: 413,
  },
  // Content types
  {
    name: "text/plain body",
    method: "POST",
    path: resolvePath,
    init: raw('{"option_id":"custom","note":"x"}', "text/plain"),
    status: 415,
  },
  {
    name: "form body",
    method: "POST",
    path: answerPath,
    init: raw("text=hello", "application/x-www-form-urlencoded"),
    status: 415,
  },
  {
    name: "body without a content type",
    method: "POST",
    path: answerPath,
    init: raw('{"text":"hello"}'),
    status: 415,
  },
  {
    name: "XML import",
    method: "POST",
    path: "/api/v1/projects/bad/tasks/import",
    init: raw("<tasks/>", "application/xml"),
    status: 415,
  },
  {
    name: "YAML where only JSON is accepted",
    method: "POST",
    path: answerPath,
    init: raw("text: hi", "application/yaml"),
    status: 415,
  },
  // Unknown ids
  { name: "unknown project (status)", method: "GET", path: "/api/projects/nosuch/status", status: 404 },
  {
    name: "unknown project (resolve)",
    method: "POST",
    path: "/api/projects/nosuch/decisions/decision-x/resolve",
    init: json({ option_id: "custom", note: "x" }),
    status: 404,
  },
  {
    name: "unknown decision",
    method: "POST",
    path: "/api/projects/bad/decisions/decision-S09-404/resolve",
    init: json({ option_id: "custom", note: "x" }),
    status: 404,
  },
  {
    name: "unknown item",
    method: "POST",
    path: "/api/projects/bad/backlog/S09-404/answer",
    init: json({ text: "x" }),
    status: 404,
  },
  {
    name: "unknown project (message)",
    method: "POST",
    path: "/api/projects/nosuch/message",
    init: json({ text: "x" }),
    status: 404,
  },
  {
    name: "unknown task (cancel)",
    method: "POST",
    path: "/api/v1/projects/bad/tasks/S09-404/cancel",
    init: json({}),
    status: 404,
  },
  {
    name: "unknown run",
    method: "GET",
    path: "/api/v1/runs/00000000-0000-0000-0000-000000000000",
    status: 404,
  },
  { name: "unknown run log stream", method: "GET", path: "/api/runs/nosuch/log/stream", status: 404 },
  {
    name: "unknown project event stream",
    method: "GET",
    path: "/api/projects/nosuch/events/stream",
    status: 404,
  },
  {
    name: "unknown token",
    method: "DELETE",
    path: "/api/v1/tokens/00000000-0000-0000-0000-000000000000",
    status: 404,
  },
  { name: "unknown route", method: "GET", path: "/api/v2/everything", status: 404 },
  { name: "wrong method", method: "PUT", path: "/api/projects/bad/status", status: 404 },
  // Hostile ids
  {
    name: "encoded ../ in project id",
    method: "GET",
    path: "/api/projects/..%2F..%2Fetc%2Fpasswd/status",
    status: 400,
    mentions: "id",
  },
  {
    name: "encoded ../ in item id",
    method: "POST",
    path: "/api/projects/bad/backlog/..%2FS00-001/answer",
    init: json({ text: "x" }),
    status: 400,
  },
  {
    name: "encoded ../ in decision id",
    method: "POST",
    path: "/api/projects/bad/decisions/..%2F..%2Fx/resolve",
    init: json({ option_id: "custom", note: "x" }),
    status: 400,
  },
  { name: "dot-dot task id", method: "GET", path: "/api/v1/projects/bad/tasks/..", status: 404 },
  { name: "NUL in task id", method: "GET", path: "/api/v1/projects/bad/tasks/S00%00-001", status: 400 },
  { name: "newline in run id", method: "GET", path: "/api/v1/runs/abc%0Adef", status: 400 },
  {
    name: "escape character in project id",
    method: "POST",
    path: "/api/projects/b%1Bad/message",
    init: json({ text: "x" }),
    status: 400,
  },
  {
    name: "absurdly long task id",
    method: "GET",
    path: `/api/v1/projects/bad/tasks/${"A".repeat(5000)}`,
    status: 400,
  },
  {
    name: "absurdly long project id",
    method: "GET",
    path: `/api/projects/${"a".repeat(300)}/status`,
    status: 400,
  },
  { name: "non-ASCII project id", method: "GET", path: "/api/projects/b%C3%A9d/status", status: 400 },
  { name: "invalid percent-encoding", method: "GET", path: "/api/projects/%E0%A4%A/status", status: 400 },
  { name: "space in token id", method: "DELETE", path: "/api/v1/tokens/a%20b", status: 400 },
  // Queries and headers
  {
    name: "limit zero",
    method: "GET",
    path: "/api/v1/projects/bad/tasks?limit=0",
    status: 400,
    mentions: "limit",
  },
  {
    name: "limit not a number",
    method: "GET",
    path: "/api/v1/projects/bad/events?limit=lots",
    status: 400,
    mentions: "limit",
  },
  {
    name: "limit too large",
    method: "GET",
    path: "/api/v1/projects/bad/runs?limit=100000",
    status: 400,
    mentions: "limit",
  },
  {
    name: "unknown status filter",
    method: "GET",
    path: "/api/v1/projects/bad/tasks?status=todo,sleeping",
    status: 400,
    mentions: "status",
  },
  {
    name: "repeated status filter",
    method: "GET",
    path: "/api/v1/projects/bad/tasks?status=todo&status=done",
    status: 400,
    mentions: "status",
  },
  { name: "bad kind filter", method: "GET", path: "/api/v1/projects/bad/tasks?kind=epic", status: 400 },
  {
    name: "bad cursor",
    method: "GET",
    path: "/api/v1/projects/bad/tasks?cursor=abc",
    status: 400,
    mentions: "cursor",
  },
  {
    name: "negative event cursor",
    method: "GET",
    path: "/api/v1/projects/bad/events?after=-1",
    status: 400,
    mentions: "after",
  },
  {
    name: "bad event type",
    method: "GET",
    path: "/api/v1/projects/bad/events?type=DROP%20TABLE",
    status: 400,
  },
  {
    name: "bad run cursor",
    method: "GET",
    path: "/api/v1/projects/bad/runs?before=yesterday",
    status: 400,
    mentions: "before",
  },
  {
    name: "bad compact flag",
    method: "GET",
    path: "/api/projects/bad/snapshot?compact=maybe",
    status: 400,
    mentions: "compact",
  },
  {
    name: "bad Last-Event-ID",
    method: "GET",
    path: "/api/projects/bad/events/stream",
    init: { headers: { "Last-Event-ID": "1; DROP" } },
    status: 400,
  },
  { name: "bad log cursor", method: "GET", path: "/api/runs/whatever/log/stream?after=../../x", status: 400 },
  // Creation bodies
  {
    name: "project id with ../",
    method: "POST",
    path: "/api/v1/projects",
    init: json({ id: "../x", repo: "/x" }),
    status: 400,
    mentions: "id",
  },
  {
    name: "project repo with a newline",
    method: "POST",
    path: "/api/v1/projects",
    init: json({ id: "okid", repo: "/x\n/y" }),
    status: 400,
    mentions: "repo",
  },
  {
    name: "project unknown field",
    method: "POST",
    path: "/api/v1/projects",
    init: json({ id: "okid", repo: "/x", colour: "red" }),
    status: 400,
    mentions: "colour",
  },
  {
    name: "project concurrency zero",
    method: "POST",
    path: "/api/v1/projects",
    init: json({ id: "okid", repo: "/x", concurrency: 0 }),
    status: 400,
    mentions: "concurrency",
  },
  {
    name: "project runner_config array",
    method: "POST",
    path: "/api/v1/projects",
    init: json({ id: "okid", repo: "/x", runner_config: [] }),
    status: 400,
    mentions: "runner_config",
  },
  {
    name: "project runner config invalid",
    method: "POST",
    path: "/api/v1/projects",
    init: json({ id: "okid", repo: "/x", runner_config: { max_sessions: -1 } }),
    status: 422,
  },
  {
    name: "task id with a slash",
    method: "POST",
    path: "/api/v1/projects/bad/tasks",
    init: json({ id: "S00/1", title: "x" }),
    status: 400,
    mentions: "id",
  },
  {
    name: "task title missing",
    method: "POST",
    path: "/api/v1/projects/bad/tasks",
    init: json({ id: "S00-050" }),
    status: 400,
    mentions: "title",
  },
  {
    name: "task with a bad glob",
    method: "POST",
    path: "/api/v1/projects/bad/tasks",
    init: json({ id: "S00-051", title: "x", scope: ["../**"] }),
    status: 422,
  },
  {
    name: "task with a multi-line title",
    method: "POST",
    path: "/api/v1/projects/bad/tasks",
    init: json({ id: "S00-052", title: "a\nb" }),
    status: 422,
  },
  {
    name: "task import not a list",
    method: "POST",
    path: "/api/v1/projects/bad/tasks/import",
    init: json({ id: "S00-060" }),
    status: 422,
  },
  {
    name: "token with unknown scope",
    method: "POST",
    path: "/api/v1/tokens",
    init: json({ name: "x", scope: "root" }),
    status: 400,
    mentions: "scope",
  },
  {
    name: "token name with control characters",
    method: "POST",
    path: "/api/v1/tokens",
    init: json({ name: "x\u0007", scope: "read" }),
    status: 400,
    mentions: "name",
  },
  // Found by the red-team run (issue 9): each answered 500 or 2xx before
  {
    name: "event cursor beyond bigint",
    method: "GET",
    path: "/api/v1/projects/bad/events?after=9999999999999999999",
    status: 400,
    mentions: "after",
  },
  {
    name: "Last-Event-ID beyond bigint",
    method: "GET",
    path: "/api/projects/bad/events/stream",
    init: { headers: { "Last-Event-ID": "9999999999999999999" } },
    status: 400,
  },
  {
    name: "task cursor beyond bigint",
    method: "GET",
    path: "/api/v1/projects/bad/tasks?cursor=9999999999999999999",
    status: 400,
    mentions: "cursor",
  },
  {
    name: "run cursor in year 0",
    method: "GET",
    path: "/api/v1/projects/bad/runs?before=0000-01-01T00:00:00Z",
    status: 400,
    mentions: "before",
  },
  {
    name: "NUL in a task title",
    method: "POST",
    path: "/api/v1/projects/bad/tasks",
    init: json({ id: "S00-070", title: "a\u0000b" }),
    status: 400,
    mentions: "title",
  },
  {
    name: "lone surrogate in an answer",
    method: "POST",
    path: answerPath,
    init: raw('{"text":"a\\ud800b"}', "application/json"),
    status: 400,
    mentions: "text",
  },
  {
    name: "NUL in an object key",
    method: "POST",
    path: "/api/projects/bad/message",
    init: raw('{"text":"hi","x\\u0000":1}', "application/json"),
    status: 400,
  },
  {
    name: "invalid UTF-8 body",
    method: "POST",
    path: answerPath,
    init: {
      rawBody: new Uint8Array([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
      headers: { "Content-Type": "application/json" },
    },
    status: 400,
  },
  {
    name: "JSON nested 20000 deep",
    method: "POST",
    path: "/api/v1/projects",
    init: raw(
      `{"id":"deep","repo":"/x","runner_config":${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}}`,
      "application/json",
    ),
    status: 400,
  },
  {
    name: "JSON array nested 20000 deep in an import",
    method: "POST",
    path: "/api/v1/projects/bad/tasks/import",
    init: raw(`${"[".repeat(20_000)}${"]".repeat(20_000)}`, "application/json"),
    status: 400,
  },
  {
    name: "YAML flow nested 20000 deep in an import",
    method: "POST",
    path: "/api/v1/projects/bad/tasks/import",
    init: raw(`tasks: ${"[".repeat(20_000)}${"]".repeat(20_000)}`, "application/yaml"),
    status: 400,
  },
  {
    name: "empty import",
    method: "POST",
    path: "/api/v1/projects/bad/tasks/import",
    init: json([]),
    status: 422,
    mentions: "at least one task",
  },
  {
    name: "empty import as tasks object",
    method: "POST",
    path: "/api/v1/projects/bad/tasks/import",
    init: raw("tasks: []\n", "application/yaml"),
    status: 422,
  },
  {
    name: "NUL in an imported YAML title",
    method: "POST",
    path: "/api/v1/projects/bad/tasks/import",
    init: raw('- id: S00-071\n  title: "a\\0b"\n', "application/yaml"),
    status: 422,
    mentions: "NUL",
  },
  {
    name: "scope with an unclosed bracket",
    method: "POST",
    path: "/api/v1/projects/bad/tasks",
    init: json({ id: "S00-072", title: "x", scope: ["[[["] }),
    status: 422,
    mentions: "unclosed",
  },
  {
    name: "imported scope with an unclosed bracket",
    method: "POST",
    path: "/api/v1/projects/bad/tasks/import",
    init: json([{ id: "S00-073", title: "x", scope: ["src/[a"] }]),
    status: 422,
    mentions: "unclosed",
  },
  {
    name: "answer with an unknown key",
    method: "POST",
    path: answerPath,
    init: json({ text: "yes", txet: "typo" }),
    status: 400,
    mentions: "txet",
  },
  {
    name: "resolve with an unknown key",
    method: "POST",
    path: resolvePath,
    init: json({ option_id: "use_postgres", resolved_by: "mallory" }),
    status: 400,
    mentions: "resolved_by",
  },
  {
    name: "message with an unknown key",
    method: "POST",
    path: "/api/projects/bad/message",
    init: json({ text: "yes", urgent: true }),
    status: 400,
    mentions: "urgent",
  },
  {
    name: "release-external with an unknown key",
    method: "POST",
    path: () => `/api/v1/projects/bad/tasks/${q.resolverId}/release-external`,
    init: json({ reason: "done", force: true }),
    status: 400,
    mentions: "force",
  },
  {
    name: "repository URL with ext::",
    method: "POST",
    path: "/api/v1/projects",
    init: json({ id: "extrepo", repo: "ext::sh -c touch% /tmp/pwned" }),
    status: 400,
    mentions: "ext::",
  },
  {
    name: "repository URL with ssh://-oProxyCommand",
    method: "POST",
    path: "/api/v1/projects",
    init: json({ id: "sshrepo", repo: "ssh://-oProxyCommand=touch%20x/repo" }),
    status: 400,
    mentions: "repo",
  },
  {
    name: "scp-like repository with an option host",
    method: "POST",
    path: "/api/v1/projects",
    init: json({ id: "scprepo", repo: "-oProxyCommand=x:repo" }),
    status: 400,
    mentions: "repo",
  },
  // Operations refused by the state machine
  {
    name: "release-external on a work task",
    method: "POST",
    path: "/api/v1/projects/bad/tasks/S00-002/release-external",
    init: json({ reason: "x" }),
    status: 409,
  },
  {
    name: "resolve with an option not offered",
    method: "POST",
    path: resolvePath,
    init: json({ option_id: "use_mongo" }),
    status: 422,
  },
];

describe("bad input gets a 4xx, a JSON error, and changes nothing", () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const before = await stateSignature(fx);
      const path = typeof c.path === "function" ? c.path() : c.path;
      const res = await fx.request(c.method, path, { token: fx.tokens.admin, ...c.init });
      if (c.status !== undefined) expect(res.status, res.text.slice(0, 300)).toBe(c.status);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(res.body?.error, res.text.slice(0, 300)).toMatchObject({
        code: expect.any(String),
        message: expect.any(String),
      });
      expect(typeof res.body.error.details).toBe("object");
      if (c.mentions) expect(res.body.error.message).toContain(c.mentions);
      expect(await stateSignature(fx)).toEqual(before);
    });
  }

  it("logged no unexpected error for any of them", () => {
    expect(fx.logLines.filter((l) => l.includes('"level":50'))).toEqual([]);
  });
});
