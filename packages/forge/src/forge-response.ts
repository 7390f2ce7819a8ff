import type { z } from "zod";
import type { ForgeKind } from "./forge-adapter.ts";
import { ForgeError } from "./forge-errors.ts";

/** `data` as `schema` says, or an `invalid_response` error naming the request and the first problem. */
export function parseForgeResponse<S extends z.ZodType>(
  forge: ForgeKind,
  schema: S,
  data: unknown,
  request: string,
): z.infer<S> {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "(root)";
  throw new ForgeError(
    forge,
    "invalid_response",
    `${forge} answered ${request} with an unexpected body: ${where}: ${issue?.message ?? "invalid"}. Check forge_url points at the forge's API.`,
  );
}
