import { createServer, type Server } from "node:http";

/**
 * A model API that refuses every call the way the vendors document their errors, for recording
 * what each real CLI prints when its key is refused, it is rate limited or out of quota, or its
 * model does not exist (failure-samples.e2e.ts). The error bodies are the vendors' published
 * shapes: OpenAI (`{"error":{message,type,param,code}}`, Responses and Chat Completions, also
 * Copilot's bring-your-own-key provider), Anthropic (`{"type":"error","error":{type,message}}`)
 * and Google AI (`{"error":{code,message,status,details}}`).
 */
export type ModelFailure = "auth" | "rate_limit" | "quota" | "model_not_found";

interface Refusal {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

function openai(failure: ModelFailure, model: string): Refusal {
  switch (failure) {
    case "auth":
      return {
        status: 401,
        body: {
          error: {
            message: "Incorrect API key provided: sk-mock-****6789.",
            type: "invalid_request_error",
            param: null,
            code: "invalid_api_key",
          },
        },
      };
    case "rate_limit":
      return {
        status: 429,
        headers: { "retry-after": "1" },
        body: {
          error: {
            message: `Rate limit reached for ${model} on requests per min (RPM): Limit 3, Used 3, Requested 1.`,
            type: "requests",
            param: null,
            code: "rate_limit_exceeded",
          },
        },
      };
    case "quota":
      return {
        status: 429,
        body: {
          error: {
            message: "You exceeded your current quota, please check your plan and billing details.",
            type: "insufficient_quota",
            param: null,
            code: "insufficient_quota",
          },
        },
      };
    case "model_not_found":
      return {
        status: 404,
        body: {
          error: {
            message: `The model \`${model}\` does not exist or you do not have access to it.`,
            type: "invalid_request_error",
            param: null,
            code: "model_not_found",
          },
        },
      };
  }
}

function anthropic(failure: ModelFailure, model: string): Refusal {
  const error = (status: number, type: string, message: string, headers?: Record<string, string>) => ({
    status,
    body: { type: "error", error: { type, message } },
    ...(headers ? { headers } : {}),
  });
  switch (failure) {
    case "auth":
      return error(401, "authentication_error", "invalid x-api-key");
    case "rate_limit":
      return error(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit",
        {
          "retry-after": "1",
        },
      );
    case "quota":
      return error(
        400,
        "invalid_request_error",
        "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
      );
    case "model_not_found":
      return error(404, "not_found_error", `model: ${model}`);
  }
}

function google(failure: ModelFailure, model: string): Refusal {
  const error = (code: number, status: string, message: string, reason?: string) => ({
    status: code,
    body: {
      error: {
        code,
        message,
        status,
        ...(reason
          ? {
              details: [
                { "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, domain: "googleapis.com" },
              ],
            }
          : {}),
      },
    },
  });
  switch (failure) {
    case "auth":
      return error(
        400,
        "INVALID_ARGUMENT",
        "API key not valid. Please pass a valid API key.",
        "API_KEY_INVALID",
      );
    case "rate_limit":
    case "quota":
      return error(
        429,
        "RESOURCE_EXHAUSTED",
        "You exceeded your current quota, please check your plan and billing details.",
      );
    case "model_not_found":
      return error(
        404,
        "NOT_FOUND",
        `models/${model} is not found for API version v1beta, or is not supported for generateContent.`,
      );
  }
}

/** Answers every request with `failure` in the protocol its path names. */
export class FailingModelServer {
  private server: Server | null = null;
  port = 0;
  requests = 0;

  constructor(
    private readonly failure: ModelFailure,
    private readonly model: string,
  ) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        this.requests += 1;
        const path = (req.url ?? "").split("?")[0] ?? "";
        const refusal = path.includes("/models/")
          ? google(this.failure, this.model)
          : path.endsWith("/messages") || path.endsWith("/count_tokens")
            ? anthropic(this.failure, this.model)
            : openai(this.failure, this.model);
        res
          .writeHead(refusal.status, { "content-type": "application/json", ...refusal.headers })
          .end(JSON.stringify(refusal.body));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const address = this.server.address();
    this.port = typeof address === "object" && address !== null ? address.port : 0;
    return this;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** A loopback port nothing listens on (bound, then closed): `connect ECONNREFUSED`. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
