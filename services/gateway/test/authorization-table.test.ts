import {
  API_SCOPES,
  AUTHORIZATION_TABLE,
  authorizationRule,
  renderAuthorizationMarkdown,
  requiredAccess,
  scopeGrants,
} from "@overseer/api-contract";
import { applyTransition, createApiToken, sql, TOKEN_SCOPES } from "@overseer/db";
import { PROJECT_STATUSES, type ProjectStatus } from "@overseer/domain";
import { beforeAll, describe, expect, it } from "vitest";
import { card, raiseQuestion, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";
import {
  type KnownIds,
  knownPathValue,
  type Operation,
  operationsOf,
  plausibleBody,
} from "./support/openapi-fuzz.ts";
import { stateDigest } from "./support/state-signature.ts";

/**
 * The authorization table (`@overseer/api-contract`) tested GENERATED from the OpenAPI
 * document: every operation of `/openapi.json` has exactly one row, and for every operation,
 * every caller (no token, an unknown token, read, operate, admin) and, where the route names a
 * project, every project state, the gateway answers as the table says. A refused request
 * (401/403) leaves Postgres exactly as it was; an allowed one is never 401/403 nor 5xx, and a
 * row whose scope depends on the project's state actually applies (2xx) when allowed.
 */

const fx = useGatewayFixture({ rateLimitWritesPerMinute: 1_000_000, maxOpenStreams: 100_000 });
const CALLERS = ["none", "unknown", ...API_SCOPES] as const;
type Caller = (typeof CALLERS)[number];

let operations: Operation[];
let worlds = 0;

beforeAll(() => {
  operations = operationsOf(fx.app.openApiDocument());
});

/** A project of its own in `status`, with a pending question, a run and a token to revoke. */
async function world(status: ProjectStatus): Promise<KnownIds> {
  const projectId = `az${++worlds}`;
  await seedProject(fx, projectId, [card("S00-001"), card("S00-002")]);
  const q = await raiseQuestion(fx, projectId);
  if (status === "paused" || status === "stopped")
    await applyTransition(fx.scratch.db, projectId, { kind: "set-project-status", status, by: "test" });
  // `completed` is reached by an approved mission completion; its authorization only needs the state.
  if (status === "completed")
    await sql`UPDATE projects SET status = 'completed' WHERE id = ${projectId}`.execute(fx.scratch.db);
  const victim = await createApiToken(fx.scratch.db, { name: `victim-${worlds}`, scope: "read" });
  return {
    projectId,
    taskId: "S00-002",
    itemId: q.resolverId,
    decisionId: q.decisionId,
    runId: q.runId,
    tokenId: victim.id,
  };
}

function tokenOf(caller: Caller): string | null {
  if (caller === "none") return null;
  if (caller === "unknown") return "ovr_thisTokenDoesNotExistAnywhere0000000000";
  return fx.tokens[caller];
}

async function call(op: Operation, ids: KnownIds, caller: Caller): Promise<{ status: number; body: string }> {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => knownPathValue(op, name, ids));
  const headers: Record<string, string> = {};
  const token = tokenOf(caller);
  if (token !== null) headers.Authorization = `Bearer ${token}`;
  const init: RequestInit = { method: op.method, headers };
  if (op.bodySchema && (op.method === "POST" || op.method === "PATCH")) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(plausibleBody(op.bodySchema, ids) ?? {});
  }
  const res = await fx.app.request(path, init);
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    await res.body?.cancel();
    return { status: res.status, body: "" };
  }
  return { status: res.status, body: await res.text() };
}

/** The project states an operation is checked in: all of them when its path names a project. */
function statesOf(op: Operation): readonly (ProjectStatus | null)[] {
  return /^\/api(\/v1)?\/projects\/\{id\}/.test(op.path) ? PROJECT_STATUSES : [null];
}

/** What the table says of this caller: the expected refusal, or null when allowed. */
function expectedRefusal(
  operationId: string,
  caller: Caller,
  status: ProjectStatus | null,
): 401 | 403 | null {
  const rule = authorizationRule(operationId);
  if (!rule) throw new Error(`${operationId} has no row`);
  const needed = requiredAccess(rule, status ?? undefined);
  if (needed === "public") return null;
  if (caller === "none" || caller === "unknown") return 401;
  return scopeGrants(caller, needed) ? null : 403;
}

describe("the authorization table", () => {
  it("has exactly one row per operation of the OpenAPI document, with the document's method and path", () => {
    const ids = operations.map((op) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(Object.keys(AUTHORIZATION_TABLE).sort());
    for (const op of operations) {
      expect(authorizationRule(op.operationId), op.operationId).toMatchObject({
        method: op.method.toLowerCase(),
        path: op.path,
      });
    }
    expect([...API_SCOPES]).toEqual([...TOKEN_SCOPES]);
  });

  it("marks exactly its public rows as needing no security in the document", () => {
    const doc = fx.app.openApiDocument() as {
      paths: Record<string, Record<string, { operationId: string; security?: unknown[] }>>;
    };
    for (const item of Object.values(doc.paths))
      for (const op of Object.values(item)) {
        const publicRow = authorizationRule(op.operationId)?.scope === "public";
        expect(op.security, op.operationId).toEqual(publicRow ? [] : undefined);
      }
  });

  it("is what docs/http-api.md shows", async () => {
    const { readFile } = await import("node:fs/promises");
    const doc = await readFile(new URL("../../../docs/http-api.md", import.meta.url), "utf8");
    const section = /<!-- authorization:begin -->\n([\s\S]*?)\n<!-- authorization:end -->/.exec(doc)?.[1];
    expect(section?.trim()).toBe(renderAuthorizationMarkdown().trim());
  });
});

describe("every operation of the document", () => {
  it("answers every caller in every project state as the table says; refusals change nothing", {
    timeout: 600_000,
  }, async () => {
    const failures: string[] = [];
    let requests = 0;
    // A world per project state, made again only after an allowed write may have changed it (a
    // refusal is checked to change nothing, and reads change nothing).
    const worldsByStatus = new Map<ProjectStatus, KnownIds>();
    // The state digest last read, while nothing but refusals happened since (a refusal's "after" is
    // the next one's "before").
    let digest: string | undefined;
    const freshWorld = async (status: ProjectStatus): Promise<KnownIds> => {
      digest = undefined;
      const made = await world(status);
      worldsByStatus.set(status, made);
      return made;
    };
    for (const op of operations) {
      for (const status of statesOf(op)) {
        let ids = worldsByStatus.get(status ?? "active") ?? (await freshWorld(status ?? "active"));
        for (const caller of CALLERS) {
          const refusal = expectedRefusal(op.operationId, caller, status);
          const where = `${op.operationId} (${op.method} ${op.path}) as ${caller}, project ${status ?? "n/a"}`;
          const before = refusal ? (digest ?? JSON.stringify(await stateDigest(fx))) : undefined;
          const res = await call(op, ids, caller);
          requests++;
          const answer = `${res.status} ${res.body.slice(0, 200)}`;
          if (refusal) {
            const code = res.status === refusal ? (JSON.parse(res.body).error?.code as string) : "";
            const codeOk =
              refusal === 401 ? /^(unauthorized|invalid_token)$/.test(code) : code === "forbidden";
            if (res.status !== refusal || !codeOk)
              failures.push(`${where}: expected ${refusal}, got ${answer}`);
            else {
              digest = JSON.stringify(await stateDigest(fx));
              if (digest !== before) failures.push(`${where}: refused but changed state`);
            }
          } else {
            digest = undefined;
            const applies = authorizationRule(op.operationId)?.byProjectStatus !== undefined;
            if (
              res.status >= 500 ||
              res.status === 401 ||
              res.status === 403 ||
              (applies && res.status >= 300)
            )
              failures.push(`${where}: expected to be allowed, got ${answer}`);
            // An allowed write may have changed the world: the next caller gets a fresh one.
            if (op.method !== "GET") ids = await freshWorld(status ?? "active");
          }
        }
      }
    }
    expect(failures).toEqual([]);
    expect(requests).toBeGreaterThanOrEqual(operations.length * CALLERS.length);
  });
});
