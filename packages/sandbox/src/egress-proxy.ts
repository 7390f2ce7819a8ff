import { chmod, rm } from "node:fs/promises";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { connect, isIP, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import {
  type Cidr,
  cidrContains,
  type EgressHostRule,
  egressRuleMatches,
  formatEgressHostRule,
  parseEgressHostRules,
} from "@overseer/run-contract";
import type { EgressDecision, ResolvedEgressProxyOptions } from "./egress-proxy-options.ts";
import { SandboxSetupError } from "./sandbox-errors.ts";
import { normalizeHostName } from "./sandbox-spec-schema.ts";

/**
 * The filtering HTTP proxy a run in network mode "proxy" talks to. The worker runs one per run,
 * listening on a unix socket that is bound into the sandbox (whose own network namespace has no
 * route anywhere); an in-sandbox bridge exposes it as http://127.0.0.1:<port> for ordinary clients.
 *
 * Decision for every request, in order (the first failing rule answers 403):
 * 1. a rule of `allowHosts` matches host and port (the run contract's egress-host-rule.ts): `host` on `allowPorts`,
 *    `host:port` on that port only, `*.domain` for subdomains; case-insensitive, trailing dot
 *    ignored; a raw IP literal only when that literal itself is listed;
 * 2. the proxy resolves the name itself and refuses if ANY resolved address is forbidden
 *    (loopback, private, link-local, CGNAT, ULA, …) and not inside one of the operator's
 *    `allowPrivateCidrs`, then connects to the address it checked, so a second DNS answer
 *    (rebinding) can never redirect the connection.
 * CONNECT tunnels are the main path (HTTPS); absolute-form plain HTTP requests are forwarded too.
 *
 * Timeouts (the same for both paths): `connectTimeoutMs` bounds only the TCP connect to the
 * upstream. Once connected, a tunnel or a forwarded request/response lives as long as bytes move
 * in either direction; `idleTimeoutMs` of silence (a hung model, a dead gateway) closes both sides.
 * A streamed model response may therefore pause for anything below the idle timeout (default
 * 300 s, OVERSEER_EGRESS_IDLE_TIMEOUT_MS); the run's own idle and hard timeouts still apply on top.
 */

const HOP_BY_HOP = new Set([
  "connection",
  "proxy-connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-authenticate",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** Splits a CONNECT authority `host:port` / `[v6]:port`. */
function parseAuthority(authority: string): { host: string; port: number } | null {
  const match = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(authority);
  if (match === null) return null;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return null;
  return { host: normalizeHostName(match[1] as string), port };
}

export class EgressProxy {
  private readonly server: Server;
  private readonly rules: readonly EgressHostRule[];
  private readonly allowPorts: readonly number[];
  private readonly privateCidrs: readonly Cidr[];
  private readonly resolve: (host: string) => Promise<string[]>;
  private readonly forbidden: (address: string) => boolean;
  private readonly connectTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly sockets = new Set<Duplex>();
  private started = false;

  /** Takes options resolved once by `resolveEgressProxyOptions`. */
  constructor(private readonly options: ResolvedEgressProxyOptions) {
    this.rules = parseEgressHostRules(options.allowHosts);
    this.allowPorts = options.allowPorts;
    this.privateCidrs = options.allowPrivateCidrs;
    this.resolve = options.resolve;
    this.forbidden = options.isForbiddenAddress;
    this.connectTimeoutMs = options.connectTimeoutMs;
    this.idleTimeoutMs = options.idleTimeoutMs;
    this.server = createServer((req, res) => void this.handleRequest(req, res));
    this.server.maxConnections = options.maxConnections;
    this.server.on("connect", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      void this.handleConnect(req, socket, head);
    });
    this.server.on("connection", (socket: Socket) => this.track(socket));
    this.server.on("clientError", (_error, socket) => {
      if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
      else socket.destroy();
    });
  }

  get socketPath(): string {
    return this.options.socketPath;
  }

  /** Listens on the unix socket (mode 0666: the socket's directory is what restricts access). */
  async start(): Promise<void> {
    await rm(this.options.socketPath, { force: true });
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.options.socketPath, () => {
        this.server.off("error", reject);
        resolve();
      });
    }).catch((error: Error) => {
      throw new SandboxSetupError(
        `egress proxy cannot listen on ${this.options.socketPath}: ${error.message}`,
      );
    });
    this.started = true;
    await chmod(this.options.socketPath, 0o666);
  }

  /** Stops accepting, destroys open tunnels, removes the socket file. Idempotent. */
  async close(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.options.socketPath, { force: true });
  }

  private track(socket: Duplex): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  /** Applies the allow-list and address rules; returns the address to connect to or a denial. */
  async decide(method: EgressDecision["method"], host: string, port: number): Promise<EgressDecision> {
    const deny = (reason: string): EgressDecision => ({ allowed: false, method, host, port, reason });
    if (!this.rules.some((rule) => egressRuleMatches(rule, host, port, this.allowPorts))) {
      const sameHost = this.rules.filter((rule) => egressRuleMatches(rule, host, rule.port ?? port, [port]));
      if (sameHost.length > 0) {
        const ports = sameHost.map((rule) => (rule.port === null ? this.allowPorts.join(", ") : rule.port));
        return deny(`port ${port} is not allowed for ${host} (allowed: ${ports.join(", ")})`);
      }
      return deny(
        isIP(host) !== 0
          ? `raw IP ${host} is not in the project's network.allowHosts (${this.describeRules()})`
          : `host ${host} is not in the project's network.allowHosts (${this.describeRules()})`,
      );
    }
    let addresses: string[];
    try {
      addresses = isIP(host) !== 0 ? [host] : await this.resolve(host);
    } catch (error) {
      return deny(
        `cannot resolve ${host}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    if (addresses.length === 0) return deny(`${host} resolves to no address`);
    const bad = addresses.find(
      (address) => this.forbidden(address) && !this.privateCidrs.some((cidr) => cidrContains(cidr, address)),
    );
    if (bad !== undefined) {
      return deny(
        `${host} resolves to ${bad}, a loopback/private/link-local or otherwise internal address (an operator may allow internal ranges with OVERSEER_EGRESS_ALLOW_PRIVATE)`,
      );
    }
    return { allowed: true, method, host, port, address: addresses[0] as string, reason: "allow-listed" };
  }

  private describeRules(): string {
    return this.rules.length === 0 ? "none" : this.rules.map(formatEgressHostRule).join(", ");
  }

  private report(decision: EgressDecision): EgressDecision {
    this.options.onDecision(decision);
    return decision;
  }

  /** Connects to the checked address within the connect timeout; the socket then has the idle timeout. */
  private connectUpstream(address: string, port: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const upstream = connect({ host: address, port });
      const timer = setTimeout(() => {
        upstream.destroy();
        reject(new Error(`connect to ${address}:${port} timed out after ${this.connectTimeoutMs} ms`));
      }, this.connectTimeoutMs);
      upstream.once("connect", () => {
        clearTimeout(timer);
        upstream.off("error", reject);
        this.track(upstream);
        upstream.setTimeout(this.idleTimeoutMs, () =>
          upstream.destroy(new EgressIdleError(this.idleTimeoutMs)),
        );
        resolve(upstream);
      });
      upstream.once("error", (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  private async handleConnect(req: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    const target = parseAuthority(req.url ?? "");
    if (target === null) {
      writeStatus(
        client,
        400,
        "Bad Request",
        `CONNECT needs host:port, received ${JSON.stringify(req.url)}\n`,
      );
      return;
    }
    const decision = this.report(await this.decide("CONNECT", target.host, target.port));
    if (!decision.allowed) {
      writeStatus(client, 403, "Forbidden", `overseer egress proxy: ${decision.reason}\n`);
      return;
    }
    let upstream: Socket;
    try {
      upstream = await this.connectUpstream(decision.address as string, target.port);
    } catch (error) {
      writeStatus(client, 502, "Bad Gateway", `overseer egress proxy: ${(error as Error).message}\n`);
      return;
    }
    if (client.destroyed) {
      upstream.destroy();
      return;
    }
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private async handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      res
        .writeHead(400, { "content-type": "text/plain" })
        .end("overseer egress proxy: send CONNECT host:port or an absolute http:// URL\n");
      return;
    }
    if (url.protocol !== "http:") {
      res
        .writeHead(400, { "content-type": "text/plain" })
        .end(`overseer egress proxy: ${url.protocol} requests must use CONNECT\n`);
      return;
    }
    const host = normalizeHostName(url.hostname);
    const port = url.port === "" ? 80 : Number(url.port);
    const decision = this.report(await this.decide("HTTP", host, port));
    if (!decision.allowed) {
      res.writeHead(403, { "content-type": "text/plain" }).end(`overseer egress proxy: ${decision.reason}\n`);
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    }
    headers.host = url.host;
    headers.connection = "close";
    let socket: Socket;
    try {
      socket = await this.connectUpstream(decision.address as string, port);
    } catch (error) {
      res
        .writeHead(502, { "content-type": "text/plain" })
        .end(`overseer egress proxy: ${(error as Error).message}\n`);
      return;
    }
    const upstream = httpRequest({
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      // No agent: this one request owns the connection the checked address was dialled on.
      createConnection: () => socket,
    });
    // The client going away ends the upstream request too (and the reverse, below).
    res.on("close", () => upstream.destroy());
    upstream.on("response", (upstreamRes) => {
      const responseHeaders: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(upstreamRes.headers)) {
        if (value !== undefined && !HOP_BY_HOP.has(name)) responseHeaders[name] = value;
      }
      res.writeHead(upstreamRes.statusCode ?? 502, responseHeaders);
      upstreamRes.pipe(res);
      // An upstream cut mid-body (idle timeout, reset) is passed on as a cut, never as a complete body.
      upstreamRes.on("error", () => res.destroy());
      upstreamRes.on("close", () => {
        if (!upstreamRes.complete) res.destroy();
      });
    });
    upstream.on("error", (error) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const status = error instanceof EgressIdleError ? 504 : 502;
      res
        .writeHead(status, { "content-type": "text/plain", connection: "close" })
        .end(`overseer egress proxy: ${error.message}\n`);
    });
    req.pipe(upstream);
  }
}

/** The upstream connection carried nothing for the idle timeout; both sides are closed. */
class EgressIdleError extends Error {
  constructor(idleTimeoutMs: number) {
    super(
      `upstream sent and received nothing for ${idleTimeoutMs} ms (the egress idle timeout, OVERSEER_EGRESS_IDLE_TIMEOUT_MS); connection closed`,
    );
    this.name = "EgressIdleError";
  }
}

function writeStatus(socket: Duplex, code: number, text: string, body: string): void {
  if (!socket.writable) return;
  socket.end(
    `HTTP/1.1 ${code} ${text}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
