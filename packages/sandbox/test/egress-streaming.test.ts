import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer, request, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EgressProxy, type EgressProxyOptions, resolveEgressProxyOptions } from "../src/index.ts";

/**
 * Streamed model traffic through the egress proxy (issue 18, item 2): a model gateway that sends
 * its first SSE event, stays quiet for a while (a long prompt, a reasoning pause), then finishes.
 * The same upstream is reached over absolute-form plain HTTP (`http://10.x` gateways, Ollama) and
 * over a CONNECT tunnel carrying TLS to a self-signed loopback server.
 *
 * `QUIET_PAUSE_MS` is past the old 10 s limit (the connect timeout used to be the response's
 * inactivity timeout); the other cases use small configured timeouts so they stay fast.
 */
const QUIET_PAUSE_MS = 12_000;
const HOST = "gateway.test";

let dir: string;
let plain: Server;
let secure: Server;
let plainPort = 0;
let securePort = 0;
let cert = "";
let proxy: EgressProxy | undefined;
const upstreamClosed: string[] = [];

/** `/sse?pause=<ms>` sends one event, waits, sends a final event; `/hang` sends one event, then nothing. */
function serveModel(req: { url?: string }, res: ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://x");
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write('data: {"type":"response.created"}\n\n');
  res.on("close", () => upstreamClosed.push(url.pathname));
  if (url.pathname === "/hang") return;
  const timer = setTimeout(
    () => {
      res.end('data: {"type":"response.completed"}\n\n');
    },
    Number(url.searchParams.get("pause") ?? "0"),
  );
  res.on("close", () => clearTimeout(timer));
}

function portOf(server: Server): number {
  const address = server.address();
  return typeof address === "object" && address !== null ? address.port : 0;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "overseer-egress-stream-"));
  await promisify(execFile)("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-keyout",
    join(dir, "key.pem"),
    "-out",
    join(dir, "cert.pem"),
    "-days",
    "1",
    "-subj",
    `/CN=${HOST}`,
    "-addext",
    `subjectAltName=DNS:${HOST}`,
  ]);
  cert = await readFile(join(dir, "cert.pem"), "utf8");
  plain = createServer(serveModel);
  secure = createHttpsServer({ cert, key: await readFile(join(dir, "key.pem"), "utf8") }, serveModel);
  await new Promise<void>((resolve) => plain.listen(0, "127.0.0.1", resolve));
  await new Promise<void>((resolve) => secure.listen(0, "127.0.0.1", resolve));
  plainPort = portOf(plain);
  securePort = portOf(secure);
});

afterAll(async () => {
  await new Promise<void>((resolve) => plain.close(() => resolve()));
  await new Promise<void>((resolve) => secure.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  upstreamClosed.length = 0;
});

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

async function startProxy(options: Partial<EgressProxyOptions> = {}): Promise<string> {
  const socketPath = join(dir, `egress-${Date.now()}-${Math.random().toString(36).slice(2)}.sock`);
  proxy = new EgressProxy(
    resolveEgressProxyOptions({
      socketPath,
      allowHosts: [HOST],
      allowPorts: [plainPort, securePort],
      resolve: async () => ["127.0.0.1"],
      isForbiddenAddress: () => false,
      ...options,
    }),
  );
  await proxy.start();
  return socketPath;
}

interface StreamResult {
  status: number;
  /** SSE events received, in order. */
  events: string[];
  /** True when the response ended as a complete HTTP message (not cut). */
  complete: boolean;
  body: string;
}

function eventsOf(body: string): string[] {
  return [...body.matchAll(/"type":"([a-z.]+)"/g)].map((m) => m[1] as string);
}

/** A streamed GET as an OpenAI-style client sends it to a plain-HTTP gateway through HTTP_PROXY. */
function plainStream(socketPath: string, path: string): Promise<StreamResult> {
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath, path: `http://${HOST}:${plainPort}${path}`, headers: { accept: "text/event-stream" } },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("close", () =>
          resolve({ status: res.statusCode ?? 0, events: eventsOf(body), complete: res.complete, body }),
        );
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** The same GET over TLS through a CONNECT tunnel (HTTPS_PROXY), verifying the self-signed cert. */
function tunnelStream(socketPath: string, path: string): Promise<StreamResult> {
  return new Promise((resolve, reject) => {
    const raw = connect(socketPath);
    raw.once("error", reject);
    let head = "";
    const onHead = (chunk: Buffer): void => {
      head += chunk.toString("latin1");
      if (!head.includes("\r\n\r\n")) return;
      raw.off("data", onHead);
      if (!head.startsWith("HTTP/1.1 200 ")) {
        resolve({ status: Number(head.split(" ")[1]), events: [], complete: true, body: head });
        raw.destroy();
        return;
      }
      const tls = tlsConnect({ socket: raw, servername: HOST, ca: cert });
      tls.once("error", reject);
      tls.once("secureConnect", () => {
        const req = request(
          { createConnection: () => tls, host: HOST, path, headers: { accept: "text/event-stream" } },
          (res) => {
            let body = "";
            res.setEncoding("utf8");
            res.on("data", (data: string) => {
              body += data;
            });
            res.on("error", () => undefined);
            res.on("close", () =>
              resolve({ status: res.statusCode ?? 0, events: eventsOf(body), complete: res.complete, body }),
            );
          },
        );
        req.on("error", reject);
        req.end();
      });
    };
    raw.on("data", onHead);
    raw.write(`CONNECT ${HOST}:${securePort} HTTP/1.1\r\nHost: ${HOST}:${securePort}\r\n\r\n`);
  });
}

const whole = { status: 200, events: ["response.created", "response.completed"], complete: true };

describe("egress proxy: streamed model responses", () => {
  it(
    `keeps a stream that is quiet for ${QUIET_PAUSE_MS / 1000} s open with the default timeouts, over plain HTTP and CONNECT`,
    async () => {
      const socketPath = await startProxy();
      const [overHttp, overTunnel] = await Promise.all([
        plainStream(socketPath, `/sse?pause=${QUIET_PAUSE_MS}`),
        tunnelStream(socketPath, `/sse?pause=${QUIET_PAUSE_MS}`),
      ]);
      expect(overHttp).toMatchObject(whole);
      expect(overTunnel).toMatchObject(whole);
    },
    QUIET_PAUSE_MS + 20_000,
  );

  it("bounds only the connect by the connect timeout: a pause longer than it still completes", async () => {
    const socketPath = await startProxy({ connectTimeoutMs: 300 });
    expect(await plainStream(socketPath, "/sse?pause=1200")).toMatchObject(whole);
    expect(await tunnelStream(socketPath, "/sse?pause=1200")).toMatchObject(whole);
  });

  it("cuts a stream quiet for longer than the configured idle timeout, on both paths and both sides", async () => {
    const socketPath = await startProxy({ idleTimeoutMs: 400 });
    const [overHttp, overTunnel] = await Promise.all([
      plainStream(socketPath, "/sse?pause=5000"),
      tunnelStream(socketPath, "/sse?pause=5000"),
    ]);
    for (const result of [overHttp, overTunnel]) {
      expect(result.status).toBe(200);
      expect(result.events).toEqual(["response.created"]);
      // A cut, never passed off as a complete response.
      expect(result.complete).toBe(false);
    }
    await expect.poll(() => [...upstreamClosed].sort()).toEqual(["/sse", "/sse"]);
  });

  it("ends a hung upstream at the idle timeout once, with both sockets closed and nothing retried", async () => {
    let requests = 0;
    plain.prependListener("request", () => {
      requests++;
    });
    const socketPath = await startProxy({ idleTimeoutMs: 400 });
    const hung = await plainStream(socketPath, "/hang");
    expect(hung).toMatchObject({ status: 200, events: ["response.created"], complete: false });
    await expect.poll(() => upstreamClosed).toEqual(["/hang"]);
    expect(requests).toBe(1);
  });

  it("answers 504 naming the idle timeout when the upstream never answers at all", async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const socketPath = await startProxy({ idleTimeoutMs: 400, allowPorts: [portOf(silent)] });
      const result = await new Promise<StreamResult>((resolve, reject) => {
        const req = request({ socketPath, path: `http://${HOST}:${portOf(silent)}/v1/responses` }, (res) => {
          let body = "";
          res.on("data", (chunk) => {
            body += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, events: [], complete: true, body }));
        });
        req.on("error", reject);
        req.end();
      });
      expect(result.status).toBe(504);
      expect(result.body).toContain("nothing for 400 ms");
      expect(result.body).toContain("OVERSEER_EGRESS_IDLE_TIMEOUT_MS");
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
