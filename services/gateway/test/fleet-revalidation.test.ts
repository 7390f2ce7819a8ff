import { describe, expect, it } from "vitest";
import { RevalidatingReader } from "../../../apps/web/src/api/revalidation.ts";
import { card, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

/**
 * The web app's fleet polling (apps/web/src/api/revalidation.ts) against a real gateway: the
 * gateway answers `Cache-Control: no-store`, so only the app's own If-None-Match gets it the 304
 * the fleet answer's ETag offers. Each request the reader sends is recorded as it reaches the
 * gateway and as the gateway answers it.
 */
const fx = useGatewayFixture();

function recordingReader(): {
  reader: RevalidatingReader;
  sent: { ifNoneMatch: string | null; status: number; etag: string | null; bytes: number }[];
} {
  const sent: { ifNoneMatch: string | null; status: number; etag: string | null; bytes: number }[] = [];
  const reader = new RevalidatingReader(async (path, init) => {
    const res = await fx.app.request(path, init);
    const body = await res.arrayBuffer();
    sent.push({
      ifNoneMatch: init.headers["If-None-Match"] ?? null,
      status: res.status,
      etag: res.headers.get("ETag"),
      bytes: body.byteLength,
    });
    return new Response(res.status === 304 ? null : body, { status: res.status, headers: res.headers });
  });
  return { reader, sent };
}

const headers = (token: string) => ({ Accept: "application/json", Authorization: `Bearer ${token}` });

describe("the web app's fleet revalidation", () => {
  it("asks with the answer's ETag, keeps the answer on 304 and takes a changed fleet", async () => {
    await seedProject(fx, "reval-a", [card("S00-001")]);
    const { reader, sent } = recordingReader();
    const token = fx.tokens.operate;

    const first = await reader.get("/api/v1/fleet", token, headers(token));
    expect(first).toMatchObject({ status: 200, ok: true, revalidated: false });
    const etag = sent[0]?.etag;
    expect(etag).toMatch(/^W\/"fleet-/);
    expect(sent[0]?.ifNoneMatch).toBeNull();

    // Unchanged: a 304 of no body, and the very object the first answer decoded to.
    const again = await reader.get("/api/v1/fleet", token, headers(token));
    expect(sent[1]).toEqual({ ifNoneMatch: etag, status: 304, etag, bytes: 0 });
    expect(again).toMatchObject({ status: 200, ok: true, revalidated: true });
    expect(again.data).toBe(first.data);

    // A change through this gateway shows on the next poll, with a new tag.
    const paused = await fx.request("POST", "/api/v1/projects/reval-a/pause", { token, body: {} });
    expect(paused.status).toBe(200);
    const changed = await reader.get("/api/v1/fleet", token, headers(token));
    expect(sent[2]?.ifNoneMatch).toBe(etag);
    expect(sent[2]?.status).toBe(200);
    expect(sent[2]?.etag).not.toBe(etag);
    expect(changed.revalidated).toBe(false);
    const projects = (changed.data as { projects: { id: string; status: string }[] }).projects;
    expect(projects.find((p) => p.id === "reval-a")?.status).toBe("paused");
  });

  it("does not reuse an answer kept for another token, nor keep a refusal", async () => {
    const { reader, sent } = recordingReader();
    await reader.get("/api/v1/fleet", fx.tokens.read, headers(fx.tokens.read));
    const other = await reader.get("/api/v1/fleet", fx.tokens.admin, headers(fx.tokens.admin));
    expect(sent[1]?.ifNoneMatch).toBeNull();
    expect(other).toMatchObject({ status: 200, revalidated: false });

    const refused = await reader.get("/api/v1/fleet", "ovr_unknown", headers("ovr_unknown"));
    expect(refused).toMatchObject({ status: 401, ok: false, revalidated: false });
    expect((refused.data as { error: { code: string } }).error.code).toBe("invalid_token");
    await reader.get("/api/v1/fleet", "ovr_unknown", headers("ovr_unknown"));
    expect(sent[3]?.ifNoneMatch).toBeNull();
  });
});
