import {
  EventStreamHttpError,
  EventStreamLostError,
  followEventStream,
  type ServerSentEvent,
} from "@overseer/event-stream";
import { formatZodIssues } from "@overseer/input-errors";
import type { z } from "zod";
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
 *
 * Every answer is parsed with its schema from the API contract (`@overseer/api-contract`): an
 * answer of another shape (a gateway of another version, a proxy's error page) is a
 * GatewayContractError naming the route and each mismatch, never an `undefined` further on.
 */
export interface GatewayClientOptions {
  /** Gateway base URL, no trailing slash. */
  readonly baseUrl: string;
  readonly token: string;
  /** Time limit of one ordinary request (not of streams), in ms. Default 30000. */
  readonly timeoutMs?: number;
}

/** Defaults of the gateway client, defined once. */
export const GATEWAY_CLIENT_DEFAULTS = Object.freeze({ timeoutMs: 30_000 });

/** Every option after defaults: what `GatewayClient` accepts. */
export type ResolvedGatewayClientOptions = Readonly<Required<GatewayClientOptions>>;

/** Merges options over `GATEWAY_CLIENT_DEFAULTS` once and checks them (key, rule, value received). */
export function resolveGatewayClientOptions(options: GatewayClientOptions): ResolvedGatewayClientOptions {
  const defined = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
  const resolved: ResolvedGatewayClientOptions = Object.freeze({
    ...GATEWAY_CLIENT_DEFAULTS,
    ...(defined as GatewayClientOptions),
  });
  if (!Number.isInteger(resolved.timeoutMs) || resolved.timeoutMs <= 0)
    throw new RangeError(
      `timeoutMs must be an integer greater than 0, received ${String(resolved.timeoutMs)}`,
    );
  return resolved;
}

/** A non-2xx answer of the gateway. */
export class GatewayHttpError extends Error {
  override readonly name = "GatewayHttpError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The parsed JSON body (route-specific; parse it with the route's error schema). */
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** A 2xx answer (or a stream event) whose body does not match the API contract; exit 1. */
export class GatewayContractError extends CommandFailed {}

export class GatewayClient {
  /** Takes options resolved once by `resolveGatewayClientOptions`. */
  constructor(private readonly options: ResolvedGatewayClientOptions) {}

  /** From the environment of the invocation; exit 2 when no token is configured. */
  static fromIo(io: CliIo): GatewayClient {
    const settings = settingsFrom(io);
    if (!settings.token) {
      const url = io.env.OVERSEER_URL?.trim();
      throw new UsageError(
        url
          ? `OVERSEER_URL is set (${settings.overseerUrl}) but OVERSEER_TOKEN is not: this command goes through that gateway and never falls back to DATABASE_URL. Export OVERSEER_TOKEN=<token> (printed by \`overseer up\`, or \`overseer token create --scope operate\`), or unset OVERSEER_URL to use the local database.`
          : "OVERSEER_TOKEN is not set: create a token with `overseer token create --scope operate` and export OVERSEER_TOKEN=<token> (OVERSEER_URL selects the gateway).",
      );
    }
    return new GatewayClient(
      resolveGatewayClientOptions({ baseUrl: settings.overseerUrl, token: settings.token }),
    );
  }

  get baseUrl(): string {
    return this.options.baseUrl;
  }

  /** GET `path`, the answer parsed with `schema`. */
  async get<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
    return this.parsed("GET", path, schema, await this.request("GET", path));
  }

  /** POST `body` as JSON to `path`, the answer parsed with `schema`. */
  async post<S extends z.ZodType>(path: string, body: unknown, schema: S): Promise<z.output<S>> {
    return this.parsed("POST", path, schema, await this.request("POST", path, json(body)));
  }

  /** PATCH `body` as JSON to `path`, the answer parsed with `schema`. */
  async patch<S extends z.ZodType>(path: string, body: unknown, schema: S): Promise<z.output<S>> {
    return this.parsed("PATCH", path, schema, await this.request("PATCH", path, json(body)));
  }

  /** POST a document (a task file) as it is, with its Content-Type, the answer parsed with `schema`. */
  async postDocument<S extends z.ZodType>(
    path: string,
    document: { text: string; contentType: string },
    schema: S,
  ): Promise<z.output<S>> {
    return this.parsed("POST", path, schema, await this.request("POST", path, document));
  }

  /** DELETE `path`, the answer parsed with `schema`. */
  async delete<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
    return this.parsed("DELETE", path, schema, await this.request("DELETE", path));
  }

  private parsed<S extends z.ZodType>(method: string, path: string, schema: S, body: unknown): z.output<S> {
    const result = schema.safeParse(body);
    if (result.success) return result.data;
    throw new GatewayContractError(
      `The gateway at ${this.options.baseUrl} answered ${method} ${path} with a body that does not match the API contract: ${mismatches(result.error.issues, body, "(body)")}. Are the CLI and the gateway the same version?`,
    );
  }

  /** One request; `body` is the payload as sent, with its Content-Type. */
  private async request(
    method: string,
    path: string,
    body?: { text: string; contentType: string },
  ): Promise<unknown> {
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.options.token}`,
      Accept: "application/json",
    };
    if (body) headers["Content-Type"] = body.contentType;
    let res: Response;
    try {
      res = await fetch(`${this.options.baseUrl}${path}`, {
        method,
        headers,
        body: body?.text,
        signal: AbortSignal.timeout(this.options.timeoutMs),
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
    return parsed;
  }

  /**
   * Follows an SSE stream (@overseer/event-stream): yields its events until the caller leaves
   * the loop or `signal` aborts. When the connection breaks it reconnects after the gateway's
   * `retry:` interval with Last-Event-ID, at most `maxReconnects` times in a row (then
   * CommandFailed); a refusal (401, 404…) throws GatewayHttpError.
   */
  async *stream(
    path: string,
    options: { lastEventId?: string; signal?: AbortSignal; maxReconnects: number },
  ): AsyncGenerator<ServerSentEvent> {
    try {
      yield* followEventStream(`${this.options.baseUrl}${path}`, {
        headers: () => ({ Authorization: `Bearer ${this.options.token}` }),
        ...options,
      });
    } catch (error) {
      if (error instanceof EventStreamHttpError) throw httpError(error.status, error.body, error.text);
      if (!(error instanceof EventStreamLostError)) throw error;
      if (error.cause instanceof TypeError) throw this.unreachable(error.cause);
      throw new CommandFailed(
        `Lost the stream ${path} of the gateway at ${this.options.baseUrl} ${error.attempts} times in a row (${(error.cause as Error).message}); run the command again to resume.`,
      );
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

function json(body: unknown): { text: string; contentType: string } {
  return { text: JSON.stringify(body), contentType: "application/json" };
}

function httpError(status: number, body: unknown, text: string): GatewayHttpError {
  const error = (body as { error?: { code?: string; message?: string } } | null)?.error;
  const message = error?.message ?? (text.trim().slice(0, 300) || `HTTP ${status}`);
  return new GatewayHttpError(status, error?.code ?? `http_${status}`, message, body);
}

/** Turns a gateway error into the CLI's error classes (400/422 → exit 2, else exit 1). */
export function toCliError(error: unknown): unknown {
  if (!(error instanceof GatewayHttpError)) return error;
  const refused =
    error.status === 401
      ? " The gateway refused OVERSEER_TOKEN: export a valid, unrevoked token (`overseer token create --scope operate` on the cluster host, or the one `overseer up` printed)."
      : "";
  const message = `${error.message} (HTTP ${error.status} ${error.code})${refused}`;
  return error.status === 400 || error.status === 422 ? new UsageError(message) : new CommandFailed(message);
}

/** Issues shown in a contract error; the rest is counted. */
const SHOWN_MISMATCHES = 5;

function mismatches(issues: readonly z.core.$ZodIssue[], input: unknown, rootName: string): string {
  const shown = formatZodIssues(issues.slice(0, SHOWN_MISMATCHES), input, { rootName });
  const more = issues.length - SHOWN_MISMATCHES;
  return more > 0 ? `${shown}; and ${more} more` : shown;
}

/** The JSON `data` of a stream event, parsed with the event's schema from the API contract. */
export function eventData<S extends z.ZodType>(message: ServerSentEvent, schema: S): z.output<S> {
  let json: unknown;
  try {
    json = JSON.parse(message.data);
  } catch {
    throw new GatewayContractError(
      `The gateway sent a \`${message.event}\` event whose data is not JSON: ${message.data.slice(0, 200)}`,
    );
  }
  const result = schema.safeParse(json);
  if (result.success) return result.data;
  throw new GatewayContractError(
    `The gateway sent a \`${message.event}\` event that does not match the API contract: ${mismatches(result.error.issues, json, "(data)")}. Are the CLI and the gateway the same version?`,
  );
}
