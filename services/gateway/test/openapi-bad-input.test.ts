import { applyTransition, createApiToken } from "@overseer/db";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { card, raiseQuestion, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";
import {
  type KnownIds,
  knownPathValue,
  type Mutation,
  mutationsFor,
  type Operation,
  operationsOf,
  plausibleBody,
  RawBody,
  sweptMutations,
  toJsonText,
} from "./support/openapi-fuzz.ts";
import { stateDigest } from "./support/state-signature.ts";

/**
 * Bad input generated from `/openapi.json`: for every operation, requests whose parameters
 * and body carry hostile values, first swept systematically (every parameter and body
 * property × every boundary value), then in random combinations with fast-check. No answer may be a 5xx, and a refused request (4xx) must
 * leave Postgres exactly as it was (the state signature: row counts, task, decision and
 * project versions). Runs per operation: `OVERSEER_FUZZ_RUNS` (default 8); seed:
 * `OVERSEER_FUZZ_SEED` (default fixed, so CI is reproducible).
 */
const RUNS = Number(process.env.OVERSEER_FUZZ_RUNS ?? 8);
/** Requests sent at once in the sweep. */
const BATCH = 8;
const SEED = Number(process.env.OVERSEER_FUZZ_SEED ?? 20_261_201);

const fx = useGatewayFixture({ rateLimitWritesPerMinute: 1_000_000, maxOpenStreams: 100_000 });
let ids: KnownIds;
let operations: Operation[];
const tally = { requests: 0, serverErrors: 0, refused: 0, accepted: 0 };

beforeAll(async () => {
  await seedProject(fx, "fz", [card("S00-001"), card("S00-002"), card("S00-003")]);
  const q = await raiseQuestion(fx, "fz");
  const claimed = await applyTransition(fx.scratch.db, "fz", { kind: "claim" });
  const victim = await createApiToken(fx.scratch.db, { name: "victim", scope: "read" });
  ids = {
    projectId: "fz",
    taskId: "S00-002",
    itemId: q.resolverId,
    decisionId: q.decisionId,
    runId: claimed.changes.runs[0]?.id ?? q.runId,
    tokenId: victim.id,
  };
  operations = operationsOf(fx.app.openApiDocument());
});

afterAll(async () => {
  console.log(
    `openapi bad-input suite: ${tally.requests} generated requests over ${operations?.length ?? 0} operations, ${tally.serverErrors} answered 5xx, ${tally.refused} refused (4xx), ${tally.accepted} accepted`,
  );
});

/**
 * Sends one mutated request of `op` and checks the answer: never 5xx; a refusal is a JSON
 * error and, when `compareState`, left Postgres as it was.
 */
async function check(
  op: Operation,
  mutations: readonly Mutation[],
  compareState: boolean,
): Promise<number | undefined> {
  const request = build(op, mutations);
  if (!request) return undefined;
  const before = compareState ? await stateDigest(fx) : undefined;
  const res = await send(request);
  tally.requests++;
  if (res.status >= 500) tally.serverErrors++;
  const where = `${op.method} ${request.url.slice(0, 200)} → ${res.status} ${res.text.slice(0, 200)}`;
  expect(res.status, where).toBeLessThan(500);
  if (res.status >= 400) {
    tally.refused++;
    if (compareState) expect(await stateDigest(fx), where).toEqual(before);
    if (res.status !== 404 || request.url.startsWith("/api"))
      expect(JSON.parse(res.text).error?.code, where).toEqual(expect.any(String));
  } else tally.accepted++;
  return res.status;
}

interface BuiltRequest {
  readonly url: string;
  readonly init: RequestInit;
}

function build(op: Operation, mutations: readonly Mutation[]): BuiltRequest | undefined {
  const pathValues = new Map(
    op.parameters.filter((p) => p.in === "path").map((p) => [p.name, knownPathValue(op, p.name, ids)]),
  );
  const query: [string, string][] = [];
  const headers: Record<string, string> = { Authorization: `Bearer ${fx.tokens.admin}` };
  let body: unknown = op.bodySchema ? plausibleBody(op.bodySchema, ids) : undefined;
  for (const m of mutations) {
    if (m.at === "path") pathValues.set(m.name, m.value);
    else if (m.at === "query") query.push([m.name, m.value]);
    else if (m.at === "header") headers[m.name] = m.value;
    else if (m.at === "body") body = m.value;
    else if (m.at === "body-field") {
      const base = body !== null && typeof body === "object" && !Array.isArray(body) ? body : {};
      body = { ...(base as Record<string, unknown>), [m.name]: m.value };
    }
  }
  let path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => pathValues.get(name) ?? "x");
  // A value with a `?` or `#` would move the rest of the URL; those are other operations.
  if (/[?#]/.test(path)) path = path.replace(/[?#]/g, "%3F");
  const search = query.map(([k, v]) => `${encodeURIComponent(k)}=${v}`).join("&");
  const init: RequestInit = { method: op.method, headers };
  if (body !== undefined && op.method !== "GET" && op.method !== "DELETE") {
    if (body instanceof RawBody) {
      headers["Content-Type"] = body.contentType;
      init.body = body.bytes;
    } else {
      headers["Content-Type"] = "application/json";
      init.body = toJsonText(body);
    }
  }
  try {
    new Headers(headers); // a header value with NUL or a newline cannot be sent at all
  } catch {
    return undefined;
  }
  return { url: search ? `${path}?${search}` : path, init };
}

async function send(request: BuiltRequest): Promise<{ status: number; text: string }> {
  const res = await fx.app.request(request.url, request.init);
  if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) {
    await res.body?.cancel();
    return { status: res.status, text: "" };
  }
  return { status: res.status, text: await res.text() };
}

describe("bad input generated from the OpenAPI document", () => {
  it("covers every operation of the document", () => {
    expect(operations.length).toBeGreaterThanOrEqual(30);
    const withParams = operations.filter((o) => o.parameters.length > 0 || o.bodySchema);
    expect(withParams.length).toBeGreaterThanOrEqual(25);
  });

  it("sweeps every parameter and body property with boundary values: no 5xx, refusals change nothing", {
    timeout: 240_000,
  }, async () => {
    for (const op of operations) {
      const cases = sweptMutations(op);
      for (let i = 0; i < cases.length; i += BATCH) {
        // A batch is sent at once and Postgres compared around it: reads must never change
        // it, nor may refused writes. When a write in the batch was accepted (a legitimate
        // change), its refused neighbours are checked again one by one.
        const batch = cases.slice(i, i + BATCH);
        const before = await stateDigest(fx);
        const statuses = await Promise.all(batch.map((m) => check(op, m, false)));
        const allRefused = statuses.every((st) => st === undefined || st >= 400);
        if (op.method === "GET" || allRefused)
          expect(await stateDigest(fx), `${op.method} ${op.path}`).toEqual(before);
        else for (const [j, m] of batch.entries()) if ((statuses[j] ?? 0) >= 400) await check(op, m, true);
      }
    }
    expect(tally.serverErrors).toBe(0);
  });

  it("random combinations of hostile values (fast-check): no 5xx, refusals change nothing", {
    timeout: 240_000,
  }, async () => {
    for (const op of operations) {
      await fc.assert(
        fc.asyncProperty(mutationsFor(op), async (mutations) => {
          await check(op, mutations, true);
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true },
      );
    }
    expect(tally.serverErrors).toBe(0);
  });

  it("logged no unexpected error", () => {
    expect(fx.logLines.filter((l) => l.includes('"level":50')).map((l) => l.slice(0, 300))).toEqual([]);
  });
});
