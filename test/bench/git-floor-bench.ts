/**
 * The floor: what the same per-run work costs when done by a plain shell loop with no
 * orchestration at all — git worktree add + write + commit + push + spawn of a trivial
 * process + worktree remove, per iteration, on a bare repository and its local mirror.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { initBareRepo } from "@overseer/git";
import { type Percentiles, percentiles } from "./stats.ts";

const run = promisify(execFile);

const LOOP = `
set -eu
mirror="$1"; n="$2"; work="$3"
base=$(git -C "$mirror" rev-parse main)
for i in $(seq 1 "$n"); do
  t0=$(date +%s%N)
  git -C "$mirror" worktree add -q --detach "$work/wt$i" "$base"
  echo "$i" > "$work/wt$i/file.txt"
  git -C "$work/wt$i" add -A
  git -C "$work/wt$i" -c user.name=b -c user.email=b@b commit -qm "iteration $i"
  git -C "$work/wt$i" push -q origin "HEAD:refs/heads/floor/$i"
  sh -c true
  git -C "$mirror" worktree remove --force "$work/wt$i"
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000 ))
done
`;

export interface FloorResult {
  iterations: number;
  perRunMs: Percentiles;
  /** Every iteration's ms, in order. */
  samplesMs: number[];
}

/**
 * Two measurements of the floor as one (their iterations pooled): the scale bench measures it
 * before its phases and again after the busy one, as the machine's speed drifts between runs.
 */
export function pooledFloor(a: FloorResult, b: FloorResult): FloorResult {
  const samplesMs = [...a.samplesMs, ...b.samplesMs];
  return { iterations: samplesMs.length, perRunMs: percentiles(samplesMs), samplesMs };
}

export async function benchGitFloor(iterations = 50): Promise<FloorResult> {
  const dir = await mkdtemp(path.join(tmpdir(), "overseer-floor-"));
  try {
    const remote = path.join(dir, "remote.git");
    await initBareRepo(remote, { initialFiles: { "README.md": "floor\n" }, branch: "main" });
    const mirror = path.join(dir, "mirror.git");
    await run("git", ["clone", "-q", "--bare", remote, mirror]);
    const { stdout } = await run("bash", ["-c", LOOP, "floor", mirror, String(iterations), dir], {
      maxBuffer: 1 << 20,
    });
    const samplesMs = stdout
      .trim()
      .split("\n")
      .map((us) => Number(us) / 1000);
    return { iterations, perRunMs: percentiles(samplesMs), samplesMs };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
