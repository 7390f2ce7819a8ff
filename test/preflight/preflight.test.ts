import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, describe, expect, it } from "vitest";

const script = join(import.meta.dirname, "..", "..", "scripts", "preflight.mjs");
const bin = mkdtempSync(join(tmpdir(), "overseer-preflight-"));
// A PATH with node and git but no bubblewrap, as on a fresh server.
symlinkSync(process.execPath, join(bin, "node"));
const git = (await execa("sh", ["-c", "command -v git"])).stdout.trim();
symlinkSync(git, join(bin, "git"));

afterAll(() => rmSync(bin, { recursive: true, force: true }));

describe("npm test preflight", () => {
  it("passes on this machine and names every check", async () => {
    const r = await execa(process.execPath, [script], { reject: false });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/node, dependencies, git, bwrap, postgres, redis ok/);
  });

  it("stops with one line per missing piece and the command that fixes it", async () => {
    const r = await execa(process.execPath, [script], {
      reject: false,
      env: { PATH: bin, REDIS_URL: "redis://127.0.0.1:1" },
      extendEnv: false,
    });
    expect(r.exitCode).toBe(1);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toContain(
      "preflight: bwrap: bubblewrap is missing -> fix: sudo apt-get install bubblewrap",
    );
    expect(lines.find((l) => l.startsWith("preflight: redis:"))).toMatch(
      /not reachable at 127\.0\.0\.1:1 .* -> fix: .*redis-server/,
    );
    expect(lines.at(-1)).toBe("preflight: 2 prerequisite(s) missing; nothing was run.");
  });
});
