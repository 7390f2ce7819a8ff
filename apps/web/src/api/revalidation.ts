/**
 * Conditional GETs for answers the gateway tags with an `ETag` (the fleet overview, ~420 kB of
 * JSON at 1,000 projects). The gateway sends `Cache-Control: no-store` on every API answer, so
 * the browser keeps nothing to revalidate and a poll never gets the 304 the gateway offers
 * unless the app asks for it: this keeps the last answer with its tag per token and path, sends
 * `If-None-Match` with the next request, and on 304 gives back the answer it kept (the same
 * object, so the view can skip re-rendering an unchanged fleet). A request carrying
 * `If-None-Match` bypasses the browser's cache (Fetch standard, HTTP-network-or-cache fetch), so
 * the 304 reaches the app as is.
 *
 * No Node or DOM API beyond fetch's: the gateway's tests run it against a real gateway.
 */

/** What `RevalidatingReader.get` hands back: the answer's status and its decoded JSON (null when not JSON). */
export interface ReadAnswer {
  readonly status: number;
  readonly ok: boolean;
  /** True when the gateway answered 304 and `data` is the answer kept from before. */
  readonly revalidated: boolean;
  readonly data: unknown;
}

type Fetch = (path: string, init: { method: "GET"; headers: Record<string, string> }) => Promise<Response>;

export class RevalidatingReader {
  /** The last tagged answer per path, with the token it was read with. */
  private readonly kept = new Map<string, { token: string; etag: string; data: unknown }>();

  constructor(private readonly send: Fetch = (path, init) => fetch(path, init)) {}

  /** GETs `path` with `headers`, as `token` (an answer kept for another token is not reused). */
  async get(path: string, token: string, headers: Record<string, string>): Promise<ReadAnswer> {
    const known = this.kept.get(path);
    const usable = known !== undefined && known.token === token ? known : undefined;
    const res = await this.send(path, {
      method: "GET",
      headers: usable ? { ...headers, "If-None-Match": usable.etag } : headers,
    });
    if (res.status === 304 && usable) return { status: 200, ok: true, revalidated: true, data: usable.data };
    const data: unknown = await res.json().catch(() => null);
    const etag = res.headers.get("ETag");
    if (res.ok && etag) this.kept.set(path, { token, etag, data });
    else this.kept.delete(path);
    return { status: res.status, ok: res.ok, revalidated: false, data };
  }
}
