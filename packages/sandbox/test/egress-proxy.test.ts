import { mkdtemp, rm } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Cidr, parseCidr } from "@overseer/run-contract";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type EgressDecision,
  EgressProxy,
  type EgressProxyOptions,
  resolveEgressProxyOptions,
} from "../src/index.ts";

/**
 * The egress proxy against a local target server. No internet: an allow-listed test name is
 * mapped to the local target by an injected resolver, and the private-address rule is relaxed
 * for that case only; the production rule is exercised separately.
 */

let target: Server;
let targetPort = 0;
let targetHits = 0;
let dir: string;
let proxy: EgressProxy;
const decisions: EgressDecision[] = [];

beforeAll(async () => {
  target = createServer((req, res) => {
    targetHits++;
    res.setHeader("x-target", "yes");
    res.end(
      `target saw ${req.method} ${req.url} host=${req.headers.host} proxy-auth=${req.headers["proxy-authorization"] ?? "none"}\n`,
    );
  });
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  const address = target.address();
  targetPort = typeof address === "object" && address !== null ? address.port : 0;
});

afterAll(async () => {
  await new Promise<void>((resolve) => target.close(() => resolve()));
});

beforeEach(async () => {
  targetHits = 0;
  decisions.length = 0;
  dir = await mkdtemp(join(tmpdir(), "overseer-egress-test-"));
});

afterEach(async () => {
  await proxy?.close();
  await rm(dir, { recursive: true, force: true });
});

async function startProxy(options: Partial<EgressProxyOptions> = {}): Promise<EgressProxy> {
  proxy = new EgressProxy(
    resolveEgressProxyOptions({
      socketPath: join(dir, "egress.sock"),
      allowHosts: ["allowed.test", "127.0.0.1"],
      allowPorts: [targetPort],
      resolve: async (host) => {
        if (host === "allowed.test" || host === "loopback.test") return ["127.0.0.1"];
        throw Object.assign(new Error("no such host"), { code: "ENOTFOUND" });
      },
      isForbiddenAddress: () => false,
      onDecision: (decision) => decisions.push(decision),
      ...options,
    }),
  );
  await proxy.start();
  return proxy;
}

/** Sends `CONNECT authority` over the proxy's unix socket, then (if 200) a GET through the tunnel. */
function connectThrough(authority: string): Promise<{ status: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(join(dir, "egress.sock"));
    let data = "";
    let tunneled = false;
    socket.on("error", reject);
    socket.on("data", (chunk) => {
      data += chunk.toString();
      if (!tunneled && data.includes("\r\n\r\n")) {
        const status = data.split("\r\n")[0] ?? "";
        if (status.includes(" 200 ")) {
          tunneled = true;
          data = "";
          socket.write(`GET /through-tunnel HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`);
        }
      }
    });
    socket.on("close", () => {
      const status = tunneled ? "HTTP/1.1 200 Connection Established" : (data.split("\r\n")[0] ?? "");
      resolve({ status, body: data });
    });
    socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  });
}

function plainRequest(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath: join(dir, "egress.sock"),
        path: url,
        method: "GET",
        headers: { "proxy-authorization": "Basic c2VjcmV0" },
      },
      (res) => {
        let body = "";
        res.on("data", (chunk) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("EgressProxy", () => {
  it("tunnels CONNECT to an allow-listed host to the (local) target", async () => {
    await startProxy();
    const result = await connectThrough(`allowed.test:${targetPort}`);
    expect(result.status).toBe("HTTP/1.1 200 Connection Established");
    expect(result.body).toContain(`target saw GET /through-tunnel host=allowed.test:${targetPort}`);
    expect(targetHits).toBe(1);
    expect(decisions).toEqual([
      {
        allowed: true,
        method: "CONNECT",
        host: "allowed.test",
        port: targetPort,
        address: "127.0.0.1",
        reason: "allow-listed",
      },
    ]);
  });

  it("matches host names case-insensitively and ignores a trailing dot", async () => {
    await startProxy();
    expect((await connectThrough(`ALLOWED.test.:${targetPort}`)).status).toContain("200");
  });

  it("allows a host:port rule on that port only, and names the allowed port otherwise", async () => {
    await startProxy({ allowHosts: [`allowed.test:${targetPort}`], allowPorts: [443] });
    expect((await connectThrough(`allowed.test:${targetPort}`)).status).toContain("200");
    const other = await connectThrough("allowed.test:443");
    expect(other.status).toBe("HTTP/1.1 403 Forbidden");
    expect(other.body).toContain(`port 443 is not allowed for allowed.test (allowed: ${targetPort})`);
  });

  it("allows subdomains for a *.domain rule but not the domain itself", async () => {
    await startProxy({
      allowHosts: [`*.allowed.test:${targetPort}`],
      resolve: async () => ["127.0.0.1"],
    });
    expect((await connectThrough(`api.allowed.test:${targetPort}`)).status).toContain("200");
    expect((await connectThrough(`allowed.test:${targetPort}`)).status).toBe("HTTP/1.1 403 Forbidden");
    expect((await connectThrough(`evilallowed.test:${targetPort}`)).status).toBe("HTTP/1.1 403 Forbidden");
  });

  it("reaches a loopback gateway only when the operator opted in to its range", async () => {
    await startProxy({ isForbiddenAddress: undefined, allowHosts: [`allowed.test:${targetPort}`] });
    const refused = await connectThrough(`allowed.test:${targetPort}`);
    expect(refused.status).toBe("HTTP/1.1 403 Forbidden");
    expect(refused.body).toContain("OVERSEER_EGRESS_ALLOW_PRIVATE");
    await proxy.close();
    await startProxy({
      isForbiddenAddress: undefined,
      allowHosts: [`allowed.test:${targetPort}`],
      allowPrivateCidrs: [parseCidr("127.0.0.0/8") as Cidr],
    });
    expect((await connectThrough(`allowed.test:${targetPort}`)).status).toContain("200");
    expect(targetHits).toBe(1);
  });

  it("answers 403 for a host that is not listed", async () => {
    await startProxy();
    const result = await connectThrough(`evil.test:${targetPort}`);
    expect(result.status).toBe("HTTP/1.1 403 Forbidden");
    expect(result.body).toContain("host evil.test is not in the project's network.allowHosts");
    expect(targetHits).toBe(0);
  });

  it("answers 403 for a raw IP unless that literal is listed", async () => {
    await startProxy({ allowHosts: ["allowed.test"] });
    const result = await connectThrough(`127.0.0.1:${targetPort}`);
    expect(result.status).toBe("HTTP/1.1 403 Forbidden");
    expect(result.body).toContain("raw IP 127.0.0.1 is not in the project's network.allowHosts");
    expect(targetHits).toBe(0);
  });

  it("with the production address rule, refuses a listed name that resolves to loopback", async () => {
    await startProxy({ isForbiddenAddress: undefined, allowHosts: ["loopback.test", "127.0.0.1"] });
    const byName = await connectThrough(`loopback.test:${targetPort}`);
    expect(byName.status).toBe("HTTP/1.1 403 Forbidden");
    expect(byName.body).toContain("resolves to 127.0.0.1");
    const listedLoopbackIp = await connectThrough(`127.0.0.1:${targetPort}`);
    expect(listedLoopbackIp.status).toBe("HTTP/1.1 403 Forbidden");
    expect(targetHits).toBe(0);
  });

  it("refuses a port that is not allowed", async () => {
    await startProxy();
    const result = await connectThrough("allowed.test:22");
    expect(result.status).toBe("HTTP/1.1 403 Forbidden");
    expect(result.body).toContain("port 22 is not allowed");
  });

  it("refuses names that do not resolve, and malformed CONNECT targets", async () => {
    await startProxy({ allowHosts: ["unresolvable.test"] });
    expect((await connectThrough(`unresolvable.test:${targetPort}`)).body).toContain(
      "cannot resolve unresolvable.test: ENOTFOUND",
    );
    expect((await connectThrough("no-port-here")).status).toBe("HTTP/1.1 400 Bad Request");
  });

  it("answers 502 when the allowed target does not accept the connection", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const address = closed.address();
    const deadPort = typeof address === "object" && address !== null ? address.port : 0;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await startProxy({ allowPorts: [deadPort] });
    expect((await connectThrough(`allowed.test:${deadPort}`)).status).toBe("HTTP/1.1 502 Bad Gateway");
  });

  it("forwards absolute-form plain HTTP for listed hosts, without proxy credentials", async () => {
    await startProxy();
    const allowed = await plainRequest(`http://allowed.test:${targetPort}/plain?q=1`);
    expect(allowed.status).toBe(200);
    expect(allowed.body).toBe(`target saw GET /plain?q=1 host=allowed.test:${targetPort} proxy-auth=none\n`);
    const denied = await plainRequest(`http://evil.test:${targetPort}/`);
    expect(denied.status).toBe(403);
    const originForm = await plainRequest("/not-a-proxy-request");
    expect(originForm.status).toBe(400);
    expect(targetHits).toBe(1);
  });

  it("close() ends open tunnels and removes the socket", async () => {
    await startProxy();
    const socket = connect(join(dir, "egress.sock"));
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    await proxy.close();
    await closed;
    await expect(
      import("node:fs/promises").then((fs) => fs.stat(join(dir, "egress.sock"))),
    ).rejects.toThrow();
  });
});
