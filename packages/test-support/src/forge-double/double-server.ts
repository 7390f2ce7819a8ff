/**
 * The HTTP side every forge double shares: one server on 127.0.0.1 serving git over smart
 * HTTP (`/OWNER/REPO.git/...`, through `git http-backend`) and the forge's REST API; faults on
 * demand (a 5xx, a 429 or a rate-limited 403 with `Retry-After` / rate-limit headers, before or
 * after the request took effect); a log of every API request; and the contract violations the
 * forge's validator found, which a test asserts empty.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { serveGitHttp } from "./git-http-backend.ts";

export interface Fault {
  readonly status: 429 | 403 | 500 | 502 | 503;
  /** How many matching requests fail (default 1). */
  readonly times?: number;
  /** `Retry-After` seconds. */
  readonly retryAfter?: number;
  /** Adds `x-ratelimit-remaining: 0` and a reset `resetInSeconds` ahead. */
  readonly rateLimitResetSeconds?: number;
  /** Only requests whose `METHOD /path` matches. */
  readonly matching?: RegExp;
  /** The request takes effect first and only its answer is lost (a create that must not be repeated). */
  readonly afterEffect?: boolean;
}

export interface ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  /** When it was answered (ms since the epoch). */
  readonly at: number;
  /** When it arrived (ms since the epoch): how far apart a client sent requests, whatever their handling took. */
  readonly receivedAt: number;
}

export interface ApiAnswer {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
  /** A non-JSON body (job logs). */
  readonly text?: string;
}

export type ApiHandler = (request: {
  method: string;
  url: URL;
  headers: IncomingMessage["headers"];
  body: unknown;
}) => Promise<ApiAnswer | null>;

export class DoubleServer {
  readonly requests: ApiRequest[] = [];
  readonly violations: string[] = [];
  #faults: (Fault & { left: number })[] = [];
  #server: Server | undefined;
  #url = "";

  constructor(
    private readonly gitRoot: string,
    private readonly apiPrefix: RegExp,
    private readonly handle: ApiHandler,
    private readonly faultBody: (status: number, fault?: Fault) => unknown,
  ) {}

  get url(): string {
    return this.#url;
  }

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      this.#route(req, res).catch((error: unknown) => {
        this.violations.push(`double crashed on ${req.method} ${req.url}: ${String(error)}`);
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, "127.0.0.1", resolve));
    this.#url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  fail(fault: Fault): void {
    this.#faults.push({ ...fault, left: fault.times ?? 1 });
  }

  /** Drops the faults not used up yet. */
  clearFaults(): void {
    this.#faults = [];
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAt = Date.now();
    const url = new URL(req.url ?? "/", this.#url);
    const gitPath = /^(\/.+?\.git)(\/.*)$/.exec(url.pathname);
    if (gitPath && !this.apiPrefix.test(url.pathname)) {
      serveGitHttp(this.gitRoot, url.pathname, req, res);
      return;
    }
    const raw = await readBody(req);
    let body: unknown;
    if (raw.length > 0) {
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        body = raw.toString("utf8");
      }
    }
    const method = req.method ?? "GET";
    const line = `${method} ${url.pathname}`;
    const fault = this.#faults.find((f) => f.left > 0 && (!f.matching || f.matching.test(line)));
    if (fault) fault.left -= 1;
    let answer: ApiAnswer | null;
    if (fault && !fault.afterEffect) answer = this.#faultAnswer(fault);
    else {
      answer = await this.handle({ method, url, headers: req.headers, body });
      if (fault && answer) answer = this.#faultAnswer(fault);
    }
    answer ??= { status: 404, body: this.faultBody(404) };
    this.requests.push({
      method,
      path: url.pathname + url.search,
      status: answer.status,
      at: Date.now(),
      receivedAt,
    });
    const headers: Record<string, string> = { ...answer.headers };
    if (answer.text !== undefined) {
      res.writeHead(answer.status, { "content-type": "text/plain; charset=utf-8", ...headers });
      res.end(answer.text);
      return;
    }
    if (answer.body === undefined) {
      res.writeHead(answer.status, headers);
      res.end();
      return;
    }
    res.writeHead(answer.status, { "content-type": "application/json; charset=utf-8", ...headers });
    res.end(JSON.stringify(answer.body));
  }

  #faultAnswer(fault: Fault): ApiAnswer {
    const headers: Record<string, string> = {};
    if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter);
    if (fault.rateLimitResetSeconds !== undefined) {
      const reset = String(Math.ceil(Date.now() / 1000) + fault.rateLimitResetSeconds);
      Object.assign(headers, {
        "x-ratelimit-limit": "5000",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": reset,
        "ratelimit-limit": "5000",
        "ratelimit-remaining": "0",
        "ratelimit-reset": reset,
      });
    }
    return { status: fault.status, body: this.faultBody(fault.status, fault), headers };
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}
