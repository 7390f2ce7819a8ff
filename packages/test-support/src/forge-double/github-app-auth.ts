/**
 * GitHub Apps in the GitHub double, as GitHub authenticates them ("Authenticating as a GitHub
 * App installation"): the App signs a JWT (RS256, `iss` = the App's id, at most 10 minutes
 * long) with its private key; with it, `GET /app` names the App and
 * `POST /app/installations/{installation_id}/access_tokens` mints an installation token, which
 * then acts as the App's bot account `<slug>[bot]` on the repositories (role `write`). A JWT that
 * is not signed by the App's key, names another App or has expired is refused with 401.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, verify } from "node:crypto";
import type { ApiAnswer } from "./double-server.ts";
import type { GitHubDoubleState } from "./github-double-state.ts";
import type { GitHubOpenApi } from "./github-openapi.ts";
import { matchTemplate } from "./route-template.ts";

export interface GitHubDoubleApp {
  readonly id: number;
  /** The App's slug: its bot account is `<slug>[bot]`. */
  readonly slug: string;
  readonly installationId: number;
}

const APP_ROUTES = ["/app", "/app/installations/{installation_id}/access_tokens"] as const;
const TOKEN_LIFETIME_MS = 3_600_000;

export class GitHubDoubleApps {
  readonly #apps: { app: GitHubDoubleApp; publicKey: KeyObject }[] = [];
  readonly #state: GitHubDoubleState;
  readonly #openapi: GitHubOpenApi;
  /** Installation tokens minted so far (the double's record: a test may assert on it). */
  readonly minted: { installationId: number; token: string }[] = [];

  constructor(state: GitHubDoubleState, openapi: GitHubOpenApi) {
    this.#state = state;
    this.#openapi = openapi;
  }

  /** Registers an App installed on the double's repositories; answers its private key (PEM). */
  add(app: GitHubDoubleApp): string {
    const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    this.#apps.push({ app, publicKey: createPublicKey(privateKey) });
    return privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  }

  /** The OpenAPI template of an App route, or null when `pathname` is none. */
  static template(method: string, pathname: string): string | null {
    return (
      APP_ROUTES.find(
        (t) => matchTemplate(t, pathname) && (t === "/app" ? method === "GET" : method === "POST"),
      ) ?? null
    );
  }

  /** Answers an App route authenticated by the App's JWT. */
  answer(template: string, pathname: string, authorization: string | string[] | undefined): ApiAnswer {
    const header = Array.isArray(authorization) ? authorization[0] : authorization;
    const jwt = header?.replace(/^bearer\s+/i, "") ?? "";
    const app = this.#verify(jwt);
    if (!app) {
      return {
        status: 401,
        body: {
          message: "A JSON web token could not be decoded",
          documentation_url: "https://docs.github.com/rest",
        },
      };
    }
    if (template === "/app") {
      return {
        status: 200,
        body: this.#openapi.instanceOf("integration", {
          id: app.id,
          slug: app.slug,
          name: app.slug,
          client_id: `Iv1.${app.id}`,
          html_url: `https://github.com/apps/${app.slug}`,
        }),
      };
    }
    const installationId = Number(matchTemplate(template, pathname)?.installation_id);
    if (installationId !== app.installationId) {
      return {
        status: 404,
        body: { message: "Not Found", documentation_url: "https://docs.github.com/rest" },
      };
    }
    const token = `ghs_${randomBytes(18).toString("base64url")}`;
    this.minted.push({ installationId, token });
    this.#state.users.push({ login: `${app.slug}[bot]`, token, role: "write" });
    return {
      status: 201,
      body: this.#openapi.instanceOf("installation-token", {
        token,
        expires_at: new Date(Date.now() + TOKEN_LIFETIME_MS).toISOString(),
        permissions: { contents: "write", pull_requests: "write", checks: "read", statuses: "read" },
        repository_selection: "all",
      }),
    };
  }

  /** The App whose key signed `jwt`, if its claims hold (iss = its id, iat ≤ now < exp ≤ iat + 10 min). */
  #verify(jwt: string): GitHubDoubleApp | null {
    const [head, body, signature] = jwt.split(".");
    if (!head || !body || !signature) return null;
    let claims: { iss?: unknown; iat?: unknown; exp?: unknown };
    let alg: unknown;
    try {
      alg = (JSON.parse(Buffer.from(head, "base64url").toString("utf8")) as { alg?: unknown }).alg;
      claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    } catch {
      return null;
    }
    if (alg !== "RS256") return null;
    const now = Math.floor(Date.now() / 1000);
    const { iat, exp } = claims;
    if (typeof iat !== "number" || typeof exp !== "number") return null;
    if (iat > now + 60 || exp <= now || exp - iat > 660) return null;
    const entry = this.#apps.find(({ app }) => String(app.id) === String(claims.iss));
    if (!entry) return null;
    const signed = verify(
      "RSA-SHA256",
      Buffer.from(`${head}.${body}`),
      entry.publicKey,
      Buffer.from(signature, "base64url"),
    );
    return signed ? entry.app : null;
  }
}
