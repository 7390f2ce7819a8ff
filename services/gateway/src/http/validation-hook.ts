import type { OpenAPIHonoOptions } from "@hono/zod-openapi";
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
}

/**
 * Turns a zod failure on any request part into 400 `invalid_request`, naming every field with
 * what was expected and what was received (a short, printable description; long strings are
 * cut and control characters escaped, so a hostile value cannot forge log lines or pages).
 */
export const validationHook: Hook = async (result, c) => {
  if (result.success) return;
  const target = result.target;
  const input = await inputOf(target, c);
  const problems: FieldProblem[] = result.error.issues.flatMap((issue): FieldProblem[] => {
    const value = valueAt(input, issue.path);
    const field = formatPath(issue.path) || (target === "json" ? "(body)" : `(${target})`);
    if (issue.code === "invalid_type") {
      const expected =
        Array.isArray(value) && target === "query"
          ? `${issue.expected} (give the parameter once)`
          : String(issue.expected);
      return [{ field, expected, received: value === undefined ? "nothing (missing)" : describe(value) }];
    }
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({
        field: formatPath([...issue.path, key]),
        expected: "no such field (unknown fields are refused: check the spelling)",
        received: describe(valueAt(value, [key])),
      }));
    }
    const message = issue.message.replace(/^[^:]+: /, "");
    return [{ field, expected: message.replace(/^expected /i, ""), received: describe(value) }];
  });
  const where = TARGET_NAMES[target] ?? target;
  const summary = problems
    .map((p) => `${p.field}: expected ${p.expected}, received ${p.received}`)
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

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** A short, printable description of a received value. */
export function describe(value: unknown): string {
  if (value === undefined) return "nothing (missing)";
  if (value === null) return "null";
  if (typeof value === "string") {
    const shown = value.length > 60 ? `${value.slice(0, 60)}…` : value;
    return `${JSON.stringify(shown)}${value.length > 60 ? ` (${value.length} characters)` : ""}`;
  }
  if (typeof value === "number" || typeof value === "boolean") return `${typeof value} ${String(value)}`;
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === "object") return "an object";
  return typeof value;
}
