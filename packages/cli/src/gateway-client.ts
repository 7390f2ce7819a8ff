import { settingsFrom } from "./cli-context.ts";
import { CommandFailed, UsageError } from "./cli-errors.ts";
import type { CliIo } from "./cli-io.ts";

/**
 * HTTP client of the operator verbs. It talks to the gateway at `OVERSEER_URL` with the bearer
 * token `OVERSEER_TOKEN`; the token is sent only in the Authorization header and never printed.
 *
 * Error mapping (exit codes, docs/http-api.md): the gateway's 400 and 422 mean "what you typed is
 * wrong" → UsageError (exit 2); every other 4xx, 5xx and network failure → CommandFailed
 * (exit 1). Either way the message is the gateway's own `error.message`.
 */
export interface GatewayClientOptions {
  /** Gateway base URL, no trailing slash. */
  readonly baseUrl: string;
  readonly token: string;
  /** Time limit of one ordinary request (not of streams), in ms. Default 30000. */
  readonly timeoutMs?: number;
}

/** A non-2xx answer of the gateway. */
export class GatewayHttpError extends Error {
  override readonly name = "GatewayHttpError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    // biome-ignore lint/suspicious/noExplicitAny: the error body is route-specific JSON
    readonly body: any,
  ) {
    super(message);
  }
}

export interface SseMessage {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

export class GatewayClient {
  private readonly timeoutMs: number;

  constructor(private readonly options: GatewayClientOptions) {
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** From the environment of the invocation; exit 2 when no token is configured. */
  static fromIo(io: CliIo): GatewayClient {
    const settings = settingsFrom(io);
    if (!settings.token) {
      throw new UsageError(
        "OVERSEER_TOKEN is not set: create a token with `overseer token create --scope operate` and export OVERSEER_TOKEN=<token> (OVERSEER_URL selects the gateway).",
      );
    }
    return new GatewayClient({ baseUrl: settings.overseerUrl, token: settings.token });
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  // biome-ignore lint/suspicious/noExplicitAny: callers read the JSON they asked for
  async get<T = any>(path: string): Promise<T> {
    return this.request<T>("GET", path);
  }

  // biome-ignore lint/suspicious/noExplicitAny: callers read the JSON they asked for
  async post<T = any>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>("POST", path, body);
  }

  // biome-ignore lint/suspicious/noExplicitAny: callers read the JSON they asked for
  async delete<T = any>(path: string): Promise<T> {
    return this.request<T>("DELETE", path);
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.options.token}`,
      Accept: "application/json",
    };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let res: Response;
    try {
      res = await fetch(`${this.options.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw this.unreachable(error);
    }
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
    if (!res.ok) throw httpError(res.status, parsed, text);
    return parsed as T;
  }

  /**
   * Opens an SSE stream and yields its messages until the server ends it or `signal` aborts.
   * Comments (keep-alives) are skipped. A non-2xx answer throws GatewayHttpError.
   */
  async *stream(
    path: string,
    options: { lastEventId?: string; signal?: AbortSignal } = {},
  ): AsyncGenerator<SseMessage> {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.options.token}`,
      Accept: "text/event-stream",
    };
    if (options.lastEventId) headers["Last-Event-ID"] = options.lastEventId;
    let res: Response;
    try {
      res = await fetch(`${this.options.baseUrl}${path}`, { headers, signal: options.signal });
    } catch (error) {
      throw this.unreachable(error);
    }
    if (!res.ok || !res.body) {
      const text = await res.text();
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
      throw httpError(res.status, parsed, text);
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += value.replace(/\r\n?/g, "\n");
        let cut = buffer.indexOf("\n\n");
        while (cut >= 0) {
          const message = parseSseBlock(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
          if (message) yield message;
          cut = buffer.indexOf("\n\n");
        }
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
  }

  private unreachable(error: unknown): CommandFailed {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (error as Error).message;
    return new CommandFailed(
      `Cannot reach the Overseer gateway at ${this.options.baseUrl} (${why}). Is it running? Set OVERSEER_URL to its address.`,
    );
  }
}

function httpError(status: number, body: unknown, text: string): GatewayHttpError {
  const error = (body as { error?: { code?: string; message?: string } } | null)?.error;
  const message = error?.message ?? (text.trim().slice(0, 300) || `HTTP ${status}`);
  return new GatewayHttpError(status, error?.code ?? `http_${status}`, message, body);
}

/** Turns a gateway error into the CLI's error classes (400/422 → exit 2, else exit 1). */
export function toCliError(error: unknown): unknown {
  if (!(error instanceof GatewayHttpError)) return error;
  const message = `${error.message} (HTTP ${error.status} ${error.code})`;
  return error.status === 400 || error.status === 422 ? new UsageError(message) : new CommandFailed(message);
}

function parseSseBlock(block: string): SseMessage | null {
  let id: string | undefined;
  let event = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "data") data.push(value);
    else if (field === "id") id = value;
    else if (field === "event") event = value;
  }
  return data.length > 0 ? { id, event, data: data.join("\n") } : null;
}
