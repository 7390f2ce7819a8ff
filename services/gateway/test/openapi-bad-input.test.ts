import { Agent, request as httpRequest } from "node:http";
import { connect } from "node:net";
import { applyTransition, createApiToken } from "@overseer/db";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway } from "../src/index.ts";
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

const fx = useGatewayFixture({
  rateLimitWritesPerMinute: 1_000_000,
  maxOpenStreams: 100_000,
  maxStreamsPerToken: 100_000,
  maxStreamsPerAddress: 100_000,
});
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

/** The operation's path with the seeded ids (or `known`) filled in. */
function pathOf(op: Operation, known: KnownIds = ids): string {
  return op.path.replace(/\{(\w+)\}/g, (_, name: string) => knownPathValue(op, name, known));
}

function authorized(op: Operation): RequestInit {
  return { method: op.method, headers: { Authorization: `Bearer ${fx.tokens.admin}` } };
}

function withJson(op: Operation, body: string): RequestInit {
  const init = authorized(op);
  (init.headers as Record<string, string>)["Content-Type"] = "application/json";
  init.body = body;
  return init;
}

describe("HTTP holes, generated from the OpenAPI document (issue 19)", () => {
  it("every integer query parameter takes decimal digits only (0x10, 1e1, +16 are 400)", async () => {
    const integers = operations.flatMap((op) =>
      op.parameters.filter((p) => p.in === "query" && p.schema.type === "integer").map((p) => ({ op, p })),
    );
    expect(integers.length).toBeGreaterThanOrEqual(5);
    for (const { op, p } of integers) {
      for (const value of ["0x10", "1e1", "+16", "%2016", "16.0", "0b1", "1_0", "0o7"]) {
        const res = await send({ url: `${pathOf(op)}?${p.name}=${value}`, init: authorized(op) });
        const where = `${op.method} ${op.path} ?${p.name}=${value} → ${res.status} ${res.text.slice(0, 200)}`;
        expect(res.status, where).toBe(400);
        expect(JSON.parse(res.text).error.message, where).toContain("decimal digits only");
      }
      const fine = await send({
        url: `${pathOf(op)}?${p.name}=${p.schema.minimum ?? 1}`,
        init: authorized(op),
      });
      expect(fine.status, `${op.path} ?${p.name}=${p.schema.minimum}`).toBeLessThan(300);
    }
  });

  it("a stream cursor beyond its store's range is 400 on every stream, never a 200 that delivers nothing", async () => {
    const streams = operations.filter((op) => op.streams);
    expect(streams.length).toBeGreaterThanOrEqual(2);
    for (const op of streams) {
      const cursors = op.parameters.filter((p) => p.name === "after" || p.name === "last-event-id");
      expect(cursors.length, op.path).toBeGreaterThanOrEqual(2);
      for (const p of cursors)
        for (const value of [
          "18446744073709551616-0",
          "0-18446744073709551616",
          "99999999999999999999-99999999999999999999",
          "9223372036854775808",
        ]) {
          const init = authorized(op);
          let url = pathOf(op);
          if (p.in === "header") (init.headers as Record<string, string>)[p.name] = value;
          else url += `?${p.name}=${encodeURIComponent(value)}`;
          const res = await send({ url, init });
          expect(res.status, `${op.path} ${p.in} ${p.name}=${value} → ${res.text.slice(0, 200)}`).toBe(400);
        }
    }
  });

  it("a task title is bounded on every operation a task enters by (422, nothing stored)", async () => {
    const taking = operations.filter(
      (op) => op.acceptsYaml || Object.hasOwn((op.bodySchema?.properties ?? {}) as object, "title"),
    );
    expect(taking.length).toBeGreaterThanOrEqual(2);
    const max = fx.app.settings.maxTitleChars;
    expect(max).toBe(500);
    for (const [i, op] of taking.entries()) {
      const body = (title: string, n: number) => {
        const task = { id: `S07-${i}${n}`, title };
        return JSON.stringify(op.acceptsYaml ? [task] : task);
      };
      const before = await stateDigest(fx);
      for (const long of [max + 1, 250_000]) {
        const res = await send({ url: pathOf(op), init: withJson(op, body("x".repeat(long), 1)) });
        expect(res.status, `${op.path} → ${res.text.slice(0, 300)}`).toBe(422);
        expect(res.text).toContain(`title: expected at most ${max} characters`);
      }
      expect(await stateDigest(fx)).toEqual(before);
      const atMax = await send({ url: pathOf(op), init: withJson(op, body("y".repeat(max), 2)) });
      expect(atMax.status, `${op.path} → ${atMax.text.slice(0, 300)}`).toBe(201);
    }
  });

  it("every write answers an over-limit body with 413 and Connection: close", async () => {
    const writes = operations.filter((op) => op.method !== "GET" && op.method !== "DELETE");
    const huge = `"${"x".repeat(fx.app.settings.maxBodyBytes + 1)}"`;
    for (const op of writes) {
      const res = await fx.app.request(pathOf(op), withJson(op, huge));
      await res.text();
      expect(res.status, `${op.method} ${op.path}`).toBe(413);
      expect(res.headers.get("connection"), `${op.method} ${op.path}`).toBe("close");
    }
  });
});

describe("HTTP holes over real connections, generated from the OpenAPI document (issue 19)", () => {
  it("stream caps: a read token stops at its cap (429, Retry-After), then its address; an admin still gets a stream", {
    timeout: 60_000,
  }, async () => {
    const gateway = await startGateway(fx.deps, {
      port: 0,
      processMetrics: false,
      keepAliveMs: 300,
      logBlockMs: 200,
      maxStreamsPerToken: 2,
      maxStreamsPerAddress: 3,
      maxOpenStreams: 4,
    });
    // A project of its own with a live run, whatever the sweeps above did to the seeded one.
    await seedProject(fx, "caps", [card("S00-001")]);
    const claimed = await applyTransition(fx.scratch.db, "caps", { kind: "claim" });
    const live = { ...ids, projectId: "caps", runId: claimed.changes.runs[0]?.id ?? "" };
    const other = await createApiToken(fx.scratch.db, { name: "second-reader", scope: "read" });
    const third = await createApiToken(fx.scratch.db, { name: "third-reader", scope: "read" });
    const open: AbortController[] = [];
    const stream = async (op: Operation, token: string): Promise<Response> => {
      const controller = new AbortController();
      const res = await fetch(`${gateway.url}${pathOf(op, live)}`, {
        headers: { Accept: "text/event-stream", Authorization: `Bearer ${token}` },
        signal: controller.signal,
      });
      if (res.status === 200) open.push(controller);
      return res;
    };
    try {
      for (const op of operations.filter((o) => o.streams)) {
        const where = `${op.method} ${op.path}`;
        for (let i = 0; i < 2; i++) expect((await stream(op, fx.tokens.read)).status, where).toBe(200);
        const capped = await stream(op, fx.tokens.read);
        expect(capped.status, where).toBe(429);
        expect(capped.headers.get("retry-after"), where).toBe("10");
        expect(await capped.json(), where).toMatchObject({
          error: { code: "too_many_streams", details: { limit: "per_token", max_streams_per_token: 2 } },
        });
        // The token's own cap leaves the other read tokens of this address one more stream.
        expect((await stream(op, other.token)).status, where).toBe(200);
        const byAddress = await stream(op, third.token);
        expect(byAddress.status, where).toBe(429);
        expect(await byAddress.json(), where).toMatchObject({ error: { details: { limit: "per_address" } } });
        // The admin is held by its own token cap only (not its address's), then by the global cap.
        expect((await stream(op, fx.tokens.admin)).status, where).toBe(200);
        const full = await stream(op, fx.tokens.admin);
        expect(full.status, where).toBe(503);
        expect(full.headers.get("retry-after"), where).toBe("10");
        for (const controller of open.splice(0)) controller.abort();
        await expect.poll(() => gateway.app.openStreamCount(), { timeout: 5000 }).toBe(0);
      }
    } finally {
      for (const controller of open) controller.abort();
      await gateway.close();
    }
  });

  it("after a 413 a keep-alive client's next request on the same agent succeeds", {
    timeout: 60_000,
  }, async () => {
    const gateway = await startGateway(fx.deps, { port: 0, processMetrics: false });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (const op of operations.filter((o) => o.method === "POST").slice(0, 5)) {
        const where = `${op.method} ${op.path}`;
        // The client sends the headers and the first part of a body larger than the limit, as a
        // client does that stops uploading once the server has answered.
        const first = await rawRequest(agent, gateway.port, op.method, pathOf(op), {
          "Content-Length": String(100 * 1024 * 1024),
        });
        expect(first.status, where).toBe(413);
        expect(first.headers.connection, where).toBe("close");
        const second = await rawRequest(agent, gateway.port, "GET", "/healthz", {});
        expect(second.status, where).toBe(200);
      }
    } finally {
      agent.destroy();
      await gateway.close();
    }
  });

  it("a malformed chunked body is answered, logged and counted as 400 on every write", {
    timeout: 60_000,
  }, async () => {
    const gateway = await startGateway(fx.deps, { port: 0, processMetrics: false });
    try {
      for (const [i, op] of operations.filter((o) => o.method === "POST").entries()) {
        const reqId = `chunked-${i}`;
        const answer = await rawSocket(
          gateway.port,
          `${op.method} ${pathOf(op)} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${fx.tokens.admin}\r\nContent-Type: application/json\r\nX-Request-Id: ${reqId}\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\nzz\r\n\r\n`,
        );
        expect(answer.split("\r\n")[0], `${op.path}: ${answer.slice(0, 200)}`).toMatch(/^HTTP\/1\.1 400 /);
        await expect
          .poll(() => fx.logLines.find((l) => l.includes(`"reqId":"${reqId}"`) && l.includes('"status"')))
          .toBeDefined();
        const line = JSON.parse(
          fx.logLines.find((l) => l.includes(`"reqId":"${reqId}"`) && l.includes('"status"')) ?? "{}",
        );
        expect(line.status, `${op.path}: ${JSON.stringify(line)}`).toBe(400);
      }
      const metrics = await fetch(`${gateway.url}/metrics`, {
        headers: { Authorization: `Bearer ${fx.tokens.admin}` },
      });
      expect(await metrics.text()).not.toMatch(/http_request_duration_seconds_count\{[^}]*status="503"/);
    } finally {
      await gateway.close();
    }
  });
});

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
}

/** One request through `agent` with a body that is declared but never fully sent. */
function rawRequest(
  agent: Agent,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        port,
        host: "127.0.0.1",
        method,
        path,
        headers: {
          Authorization: `Bearer ${fx.tokens.admin}`,
          "Content-Type": "application/json",
          ...headers,
        },
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.on("error", reject);
    if (method === "POST") req.write(`"${"x".repeat(2 * 1024 * 1024)}`);
    else req.end();
  });
}

/** Writes `text` on a fresh socket and returns everything the server sent before closing it. */
function rawSocket(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let data = "";
    socket.on("data", (chunk) => {
      data += chunk.toString();
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(data));
    socket.write(text);
    setTimeout(() => socket.end(), 1000);
  });
}
