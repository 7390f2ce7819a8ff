/**
 * Contract checks for the forges that publish no OpenAPI description on npm (GitLab, Gitea /
 * Forgejo). Every route of their doubles declares zod schemas for its query and body, written
 * from the forge's parameter tables (strict: a parameter the forge does not document is a
 * violation), and one response shape per status, derived from an example payload shaped like
 * the forge's documented example (`shapeOf`): the same fields, each of the example's JSON type
 * or null, arrays of the first element's shape, and nothing else. The example payloads are
 * typed by the kept client (gitbeaker, gitea-js), so the client's types, the documented
 * example and what the double answers must all agree.
 */
import { z } from "zod";
import type { ApiAnswer } from "./double-server.ts";
import { matchTemplate } from "./route-template.ts";

/** A zod schema accepting what has the documented example's shape (field set and JSON types). */
export function shapeOf(example: unknown): z.ZodType {
  if (example === null || example === undefined) return z.unknown();
  if (Array.isArray(example)) return z.array(example.length > 0 ? shapeOf(example[0]) : z.unknown());
  switch (typeof example) {
    case "string":
      return z.string().nullable();
    case "number":
      return z.number().nullable();
    case "boolean":
      return z.boolean().nullable();
    case "object":
      return z
        .strictObject(
          Object.fromEntries(Object.entries(example).map(([key, value]) => [key, shapeOf(value)])),
        )
        .nullable();
    default:
      return z.unknown();
  }
}

/** The documented example with the double's own values laid over it (fields the double has no use for keep the example's). */
export function fromExample<T extends object>(example: T, overlay: Partial<T>): T {
  return { ...example, ...overlay };
}

/** What a status answers: a JSON body of a shape, plain text (job logs), or nothing. */
export type ResponseContract = z.ZodType | "text" | "empty";

export interface ContractRoute<Ctx> {
  readonly method: string;
  /** A path template below the API prefix (`/projects/{id}/merge_requests`). */
  readonly template: string;
  /** The query parameters the forge documents for this route (strict); none when absent. */
  readonly query?: z.ZodType;
  /** The request body the forge documents (strict); no body allowed when absent. */
  readonly body?: z.ZodType;
  /** Every status this route may answer, with its body's contract. */
  readonly responses: Readonly<Record<number, ResponseContract>>;
  readonly handle: (
    ctx: Ctx & { params: Record<string, string>; query: URLSearchParams; body: Record<string, unknown> },
  ) => Promise<ApiAnswer> | ApiAnswer;
}

/** The routes' answer to one request, its problems pushed to `violations`; `null` when no route matches. */
export async function dispatchContract<Ctx>(
  routes: readonly ContractRoute<Ctx>[],
  forge: string,
  request: { method: string; pathname: string; query: URLSearchParams; body: unknown },
  /** The route's context (the authenticated user, the repository), or the forge's refusal before any route runs (401, 404). */
  ctx: (params: Record<string, string>) => { readonly ok: Ctx } | { readonly refuse: ApiAnswer },
  violations: string[],
  refusal: (problems: string[]) => ApiAnswer,
): Promise<ApiAnswer | null> {
  for (const route of routes) {
    if (route.method !== request.method) continue;
    const params = matchTemplate(route.template, request.pathname);
    if (!params) continue;
    const where = `${request.method} ${route.template}`;
    const problems = requestProblems(route, request.query, request.body).map((p) => `${where}: ${p}`);
    if (problems.length > 0) {
      violations.push(...problems);
      return refusal(problems);
    }
    const context = ctx(params);
    if ("refuse" in context) return context.refuse;
    const answer = await route.handle({
      ...context.ok,
      params,
      query: request.query,
      body: (request.body ?? {}) as Record<string, unknown>,
    });
    violations.push(...responseProblems(route, answer).map((p) => `${where} → ${answer.status}: ${p}`));
    return answer;
  }
  violations.push(`${request.method} ${request.pathname}: not a route of the ${forge} double`);
  return null;
}

function requestProblems(
  route: Pick<ContractRoute<never>, "query" | "body">,
  query: URLSearchParams,
  body: unknown,
): string[] {
  const problems: string[] = [];
  const params: Record<string, string | string[]> = {};
  for (const key of new Set(query.keys())) {
    const all = query.getAll(key);
    params[key] = key.endsWith("[]") ? all : (all[0] ?? "");
  }
  if (route.query) problems.push(...issues("query", route.query, params));
  else if (Object.keys(params).length > 0)
    problems.push(`takes no query parameters (${Object.keys(params)})`);
  if (route.body) problems.push(...issues("body", route.body, body ?? {}));
  else if (body !== undefined) problems.push("takes no request body");
  return problems;
}

function responseProblems(route: Pick<ContractRoute<never>, "responses">, answer: ApiAnswer): string[] {
  const contract = route.responses[answer.status];
  if (contract === undefined) return [`status not declared (declared: ${Object.keys(route.responses)})`];
  if (contract === "text") return answer.text === undefined ? ["a text body was expected"] : [];
  if (contract === "empty") return answer.body === undefined ? [] : ["no body was expected"];
  return issues("body", contract, answer.body);
}

function issues(what: string, schema: z.ZodType, value: unknown): string[] {
  const parsed = schema.safeParse(value);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => `${what}.${issue.path.join(".")}: ${issue.message}`);
}
