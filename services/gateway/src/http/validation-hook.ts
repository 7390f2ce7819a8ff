import type { OpenAPIHonoOptions } from "@hono/zod-openapi";
import { formatIssueLine, valueAtPath, zodIssuesToConfigIssues } from "@overseer/input-errors";
import type { GatewayEnv } from "../gateway-env.ts";
import { ApiError } from "./api-error.ts";

type Hook = NonNullable<OpenAPIHonoOptions<GatewayEnv>["defaultHook"]>;

const TARGET_NAMES: Record<string, string> = {
  json: "request body",
  query: "query string",
  param: "path",
  header: "headers",
  cookie: "cookies",
};

export interface FieldProblem {
  /** `option_id`, `tasks[2].title`, `(body)` for the whole value. */
  readonly field: string;
  readonly expected: string;
  readonly received: string;
  /** What to do, when there is something more specific to say (`did you mean "text"?`). */
  readonly hint?: string;
}

/**
 * Turns a zod failure on any request part into 400 `invalid_request`, naming every field with
 * what was expected and what was received, through the shared zod-issue formatter of
 * `@overseer/input-errors` (received values are short JSON excerpts: long strings are cut and
 * control characters escaped, so a hostile value cannot forge log lines or pages).
 */
export const validationHook: Hook = async (result, c) => {
  if (result.success) return;
  const target = result.target;
  const input = await inputOf(target, c);
  const rootName = target === "json" ? "(body)" : `(${target})`;
  const problems: FieldProblem[] = result.error.issues.flatMap((issue) => {
    const repeated =
      issue.code === "invalid_type" && target === "query" && Array.isArray(valueAtPath(input, issue.path));
    return zodIssuesToConfigIssues([issue], input).map(
      (problem): FieldProblem => ({
        field: problem.path === "" ? rootName : problem.path,
        expected: repeated ? `${problem.expected} (give the parameter once)` : problem.expected,
        received: problem.received,
        ...(problem.hint ? { hint: problem.hint } : {}),
      }),
    );
  });
  const where = TARGET_NAMES[target] ?? target;
  const summary = problems
    .map((p) => formatIssueLine({ path: p.field, expected: p.expected, received: p.received, hint: p.hint }))
    .join("; ");
  throw new ApiError(
    400,
    "invalid_request",
    `Invalid ${where}: ${summary}. Fix ${problems.length === 1 ? "this field" : "these fields"} and retry.`,
    {
      target: where,
      problems,
    },
  );
};

async function inputOf(target: string, c: Parameters<Hook>[1]): Promise<unknown> {
  try {
    if (target === "json") return await c.req.json();
    if (target === "query") {
      return Object.fromEntries(
        Object.entries(c.req.queries()).map(([k, v]) => [k, v.length === 1 ? v[0] : v]),
      );
    }
    if (target === "param") return c.req.param();
  } catch {
    return undefined;
  }
  return undefined;
}
