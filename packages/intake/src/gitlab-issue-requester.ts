/**
 * gitbeaker's requester for the GitLab issues adapter: sends through the connection's fetch
 * (tests route it to the GitLab double) and turns a refused answer into a GitLabApiError with
 * its status and `Retry-After`, which the adapter's retry policy reads (tracker-retry.ts).
 */
import type { RequestOptions } from "@gitbeaker/requester-utils";

export class GitLabApiError extends Error {
  override readonly name = "GitLabApiError";
  constructor(
    message: string,
    readonly status: number,
    readonly retryAfterMs: number | undefined,
  ) {
    super(message);
  }
}

/** Async: gitbeaker is loaded by the adapter's first call (gitlab-issues-adapter.ts), not at import. */
export async function gitlabIssueRequesterFn(send: typeof fetch) {
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
            ? JSON.stringify((parsed as { message?: unknown }).message ?? parsed)
            : String(parsed).slice(0, 300);
        const after = Number(response.headers.get("retry-after"));
        throw new GitLabApiError(
          `GitLab ${method ?? "GET"} ${url.pathname} answered ${response.status}: ${detail}`,
          response.status,
          Number.isFinite(after) && after > 0 ? after * 1000 : undefined,
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
