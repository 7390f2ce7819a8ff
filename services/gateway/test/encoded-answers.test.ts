import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { EncodedBody, negotiateCoding, noneMatch } from "../src/http/encoded-body.ts";
import { startGateway } from "../src/index.ts";
import { card, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";

/**
 * The fleet answer is compressed once per change and given in the coding each request accepts
 * (none without Accept-Encoding), with a weak ETag answered 304 by If-None-Match. The fleet is
 * shared for an hour here, so every request of a test gets the same answer.
 */
const fx = useGatewayFixture({ fleetCacheMs: 3_600_000, accessLogSample: 4 });

async function fleet(headers: Record<string, string>): Promise<Response> {
  return fx.app.request("/api/v1/fleet", {
    headers: { Authorization: `Bearer ${fx.tokens.read}`, ...headers },
  });
}

describe("content coding negotiation", () => {
  it.each([
    [undefined, "identity"],
    ["", "identity"],
    ["identity", "identity"],
    ["gzip, deflate", "gzip"],
    ["gzip, deflate, br, zstd", "br"],
    ["GZIP", "gzip"],
    ["br;q=0.5, gzip", "gzip"],
    ["br;q=0.5, gzip;q=0.4", "br"],
    ["gzip;q=0, br;q=0", "identity"],
    ["deflate", "identity"],
    ["*", "br"],
    ["*;q=0.1, br;q=0", "gzip"],
  ])("Accept-Encoding %j: %s", (header, coding) => {
    expect(negotiateCoding(header)).toBe(coding);
  });

  it("matches If-None-Match by weak comparison, in a list, and *", () => {
    expect(noneMatch('W/"a"', 'W/"a"')).toBe(true);
    expect(noneMatch('"a"', 'W/"a"')).toBe(true);
    expect(noneMatch('W/"b", W/"a"', 'W/"a"')).toBe(true);
    expect(noneMatch("*", 'W/"a"')).toBe(true);
    expect(noneMatch('W/"b"', 'W/"a"')).toBe(false);
    expect(noneMatch(undefined, 'W/"a"')).toBe(false);
  });

  it("compresses each coding once, and the next body makes the codings its predecessor was asked for", async () => {
    const bytes = Buffer.from(
      JSON.stringify({ projects: Array.from({ length: 5000 }, (_, i) => ({ id: i })) }),
    );
    const first = new EncodedBody(bytes, "t1");
    expect(first.etag).toBe('W/"t1"');
    const gz = await first.bytes("gzip");
    expect(await first.bytes("gzip")).toBe(gz);
    expect(Buffer.from(gunzipSync(gz)).equals(bytes)).toBe(true);
    const next = new EncodedBody(bytes);
    await next.prepareLike(first);
    // Made already: the same object, not a second compression.
    const made = next.bytes("gzip");
    expect(await made).toBe(await next.bytes("gzip"));
    expect(next.etag).toMatch(/^W\/"[A-Za-z0-9_-]{27}"$/);
  });
});

describe("fleet answer codings", () => {
  it("gives the same bytes in every coding: identity without Accept-Encoding, br and gzip as accepted", async () => {
    for (let i = 0; i < 30; i++)
      await seedProject(fx, `enc-${String(i).padStart(2, "0")}`, [card("S00-001")]);
    const plain = await fleet({});
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("content-type")).toBe("application/json");
    expect(plain.headers.get("vary")).toContain("Accept-Encoding");
    const etag = plain.headers.get("etag") ?? "";
    expect(etag).toMatch(/^W\/"fleet-/);
    const identity = Buffer.from(await plain.arrayBuffer());
    expect(identity.length).toBeGreaterThan(1024);
    expect(JSON.parse(identity.toString("utf8")).projects).toHaveLength(30);

    const gz = await fleet({ "Accept-Encoding": "gzip, deflate" });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(gz.headers.get("etag")).toBe(etag);
    const gzBytes = Buffer.from(await gz.arrayBuffer());
    expect(gzBytes.length).toBeLessThan(identity.length / 4);
    expect(Buffer.from(gunzipSync(gzBytes)).equals(identity)).toBe(true);

    const br = await fleet({ "Accept-Encoding": "gzip, deflate, br, zstd" });
    expect(br.headers.get("content-encoding")).toBe("br");
    expect(Buffer.from(brotliDecompressSync(Buffer.from(await br.arrayBuffer()))).equals(identity)).toBe(
      true,
    );

    const refused = await fleet({ "Accept-Encoding": "br;q=0, gzip;q=0" });
    expect(refused.headers.get("content-encoding")).toBeNull();
    expect(Buffer.from(await refused.arrayBuffer()).equals(identity)).toBe(true);
  });

  it("answers 304 to If-None-Match of the current answer, and 200 with a new tag after a change", async () => {
    const first = await fleet({});
    const etag = first.headers.get("etag") ?? "";
    const unchanged = await fleet({ "If-None-Match": etag, "Accept-Encoding": "gzip" });
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get("etag")).toBe(etag);
    expect((await unchanged.arrayBuffer()).byteLength).toBe(0);
    expect((await fleet({ "If-None-Match": 'W/"other"' })).status).toBe(200);

    // This gateway's own write drops the shared answer: the next one is read again, a new tag.
    const paused = await fx.request("POST", "/api/v1/projects/enc-00/pause", { token: fx.tokens.operate });
    expect(paused.status).toBe(200);
    const after = await fleet({ "If-None-Match": etag });
    expect(after.status).toBe(200);
    expect(after.headers.get("etag")).not.toBe(etag);
    const { projects } = (await after.json()) as { projects: { id: string; status: string }[] };
    const project = projects.find((p) => p.id === "enc-00");
    expect(project?.status).toBe("paused");
  });

  it("is decoded by an HTTP client as a browser's fetch decodes it", async () => {
    const gateway = await startGateway(fx.deps, { port: 0, processMetrics: false, fleetCacheMs: 3_600_000 });
    try {
      // Node's fetch asks for gzip and decodes it, as browsers do (with br too).
      const res = await fetch(`${gateway.url}/api/v1/fleet`, {
        headers: { Authorization: `Bearer ${fx.tokens.read}` },
      });
      expect(res.headers.get("content-encoding")).toBe("gzip");
      const body = (await res.json()) as { projects: { id: string }[] };
      expect(body.projects.map((p) => p.id)).toContain("enc-29");
    } finally {
      await gateway.close();
    }
  });
});

describe("access log sampling", () => {
  it("logs one in accessLogSample successful reads, with `sampled`, and every error and write", async () => {
    const before = fx.logLines.length;
    for (let i = 0; i < 8; i++) expect((await fleet({})).status).toBe(200);
    expect((await fleet({ Authorization: "Bearer ovr_nope" })).status).toBe(401);
    expect((await fx.request("GET", "/api/v1/nowhere")).status).toBe(404);
    const resumed = await fx.request("POST", "/api/v1/projects/enc-00/resume", { token: fx.tokens.operate });
    expect(resumed.status).toBe(200);
    const lines = fx.logLines
      .slice(before)
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === "request");
    const reads = lines.filter((l) => l.status === 200 && l.method === "GET");
    expect(reads).toHaveLength(2);
    expect(reads.every((l) => l.sampled === 4)).toBe(true);
    expect(lines.filter((l) => l.status === 401 || l.status === 404).map((l) => l.status)).toEqual([
      401, 404,
    ]);
    expect(
      lines.filter((l) => l.method === "POST" && l.status === 200 && l.sampled === undefined),
    ).toHaveLength(1);
  });
});
