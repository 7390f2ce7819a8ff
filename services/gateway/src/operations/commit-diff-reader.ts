import { RepoMirror } from "@overseer/git";

/**
 * Reads a run's commit for the web app's diff view from a read-only mirror of the project's
 * repository kept by the gateway (`<dataDir>/mirrors/<project>.git`, hardened git: no hooks,
 * filters or repository-controlled programs). A commit missing from the mirror triggers one
 * fetch (coalesced across concurrent requests); the patch is cut at `maxPatchBytes`.
 */
export interface CommitDiff {
  available: boolean;
  reason: string | null;
  message: string;
  files: { path: string; additions: number; deletions: number; binary: boolean }[];
  patch: string;
  truncated: boolean;
}

const FULL_SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export class CommitDiffReader {
  private readonly mirrors = new Map<string, RepoMirror>();

  constructor(
    private readonly dataDir: string,
    private readonly maxPatchBytes: number,
  ) {}

  async read(projectId: string, remote: string, sha: string): Promise<CommitDiff> {
    if (!FULL_SHA.test(sha)) return unavailable(`commit id ${sha.slice(0, 80)} is not a full commit id`);
    const mirror = this.mirror(projectId, remote);
    if (!(await this.has(mirror, sha))) {
      try {
        await mirror.ensure();
      } catch (error) {
        return unavailable(`cannot fetch the project repository: ${(error as Error).message.slice(0, 300)}`);
      }
      if (!(await this.has(mirror, sha))) {
        return unavailable(`commit ${sha} is not in the project repository (its branch may be gone)`);
      }
    }
    const head = await mirror.git([
      "show",
      "--no-color",
      "--no-ext-diff",
      "--no-renames",
      "--format=%B%x00",
      "--numstat",
      "--end-of-options",
      sha,
    ]);
    const [message = "", numstat = ""] = head.stdout.split("\0");
    const files = numstat
      .split("\n")
      .map((line) => line.split("\t"))
      .filter((cols) => cols.length >= 3)
      .map(([add = "", del = "", ...rest]) => ({
        path: rest.join("\t"),
        additions: add === "-" ? 0 : Number(add),
        deletions: del === "-" ? 0 : Number(del),
        binary: add === "-",
      }));
    const body = await mirror.git([
      "show",
      "--no-color",
      "--no-ext-diff",
      "--no-renames",
      "--format=",
      "--patch",
      "--end-of-options",
      sha,
    ]);
    const bytes = Buffer.byteLength(body.stdout);
    const truncated = bytes > this.maxPatchBytes;
    const patch = truncated
      ? Buffer.from(body.stdout).subarray(0, this.maxPatchBytes).toString("utf8")
      : body.stdout;
    return { available: true, reason: null, message: message.trim(), files, patch, truncated };
  }

  private mirror(projectId: string, remote: string): RepoMirror {
    const key = `${projectId}\0${remote}`;
    let mirror = this.mirrors.get(key);
    if (!mirror) {
      mirror = new RepoMirror({ dataDir: this.dataDir, projectId, remote, autoMaintenance: false });
      this.mirrors.set(key, mirror);
    }
    return mirror;
  }

  private async has(mirror: RepoMirror, sha: string): Promise<boolean> {
    try {
      return (await mirror.resolveRef(sha)) !== null;
    } catch {
      return false;
    }
  }
}

function unavailable(reason: string): CommitDiff {
  return { available: false, reason, message: "", files: [], patch: "", truncated: false };
}
