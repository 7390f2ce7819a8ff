/**
 * gitbeaker's requester, sending through Overseer's retrying, counting fetch instead of the
 * default one (which retries only 429 and 502, without waiting what `Retry-After` asks).
 * Failed answers become ForgeErrors carrying the status.
 */
import type { RequestOptions } from "@gitbeaker/requester-utils";
import { codeOfStatus, ForgeError } from "./forge-errors.ts";

/** Async: gitbeaker is loaded by the adapter's first call (gitlab-adapter.ts), not at import. */
export async function gitlabRequesterFn(send: typeof fetch) {
  const { createRequesterFn } = await import("@gitbeaker/requester-utils");
  return createRequesterFn(
    (_, options) => Promise.resolve(options),
    async (endpoint, raw) => {
      const { prefixUrl, searchParams, method, headers, body, signal } = (raw ?? {}) as RequestOptions;
      const url = new URL(endpoint, prefixUrl?.endsWith("/") ? prefixUrl : `${prefixUrl}/`);
      url.search = searchParams ?? "";
      const response = await send(url, {
        method: method ?? "GET",
        ...(headers ? { headers } : {}),
        ...(body !== undefined ? { body } : {}),
        ...(signal ? { signal } : {}),
      });
      const type = (response.headers.get("content-type") ?? "").split(";")[0]?.trim() ?? "";
      const text = await response.text();
      const parsed: unknown = type === "application/json" && text ? JSON.parse(text) : text;
      if (!response.ok) {
        const detail =
          typeof parsed === "object" && parsed !== null
            ? JSON.stringify((parsed as { message?: unknown; error?: unknown }).message ?? parsed)
            : String(parsed).slice(0, 300);
        throw new ForgeError(
          "gitlab",
          codeOfStatus(response.status),
          `GitLab ${method ?? "GET"} ${url.pathname} answered ${response.status}: ${detail}`,
          response.status,
        );
      }
      return {
        body: (response.status === 204 ? null : parsed) as Record<string, unknown>,
        headers: Object.fromEntries(response.headers.entries()),
        status: response.status,
      };
    },
  );
}
