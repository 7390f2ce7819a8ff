import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * Every Redis subscription goes through `subscribeWhenReady` / `psubscribeWhenReady`
 * (packages/queue/src/redis-subscribe.ts): an ioredis SUBSCRIBE written during a connection's
 * handshake resolves, then the connection is remade and what is published meanwhile is lost.
 * A direct `.subscribe(channel)` or `.psubscribe(pattern)` anywhere else is refused here.
 * Overseer's own subscriber APIs take a listener (`subscribe(projectId, () => …)`), which a
 * Redis call never does, so a call with an arrow function among its arguments is not Redis's.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const SOURCE = /^((packages|services|apps)\/[^/]+\/(src|test)|test)\/.+\.tsx?$/;
const HELPER = "packages/queue/src/redis-subscribe.ts";
const CALL = /\.(p?subscribe)\(([^()]*(?:\([^()]*\)[^()]*)*)\)/g;

function directSubscriptions(file: string, text: string): string[] {
  return [...text.matchAll(CALL)]
    .filter((match) => !(match[2] ?? "").includes("=>"))
    .map((match) => `${file}:${text.slice(0, match.index).split("\n").length} ${match[0]}`);
}

describe("Redis subscriptions", () => {
  it("go through subscribeWhenReady / psubscribeWhenReady, never a connection's own subscribe", () => {
    const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], {
      cwd: ROOT,
      encoding: "utf8",
    })
      .split("\n")
      .filter((file) => SOURCE.test(file) && file !== HELPER && !file.startsWith("test/code-shape/"));
    const offences = files.flatMap((file) =>
      directSubscriptions(file, readFileSync(path.join(ROOT, file), "utf8")),
    );
    expect(offences).toEqual([]);
  });

  it("spots a direct call and leaves Overseer's listener APIs alone", () => {
    expect(directSubscriptions("a.ts", "await connection.subscribe(live.channel(id));")).toEqual([
      "a.ts:1 .subscribe(live.channel(id))",
    ]);
    expect(directSubscriptions("b.ts", "x;\nawait redis.psubscribe(pattern);")).toEqual([
      "b.ts:2 .psubscribe(pattern)",
    ]);
    expect(directSubscriptions("c.ts", "await input.subscriber.subscribe(projectId, () => wake());")).toEqual(
      [],
    );
    expect(directSubscriptions("d.ts", "await subscribeWhenReady(connection, channel);")).toEqual([]);
  });
});
