import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { execa } from "execa";

/**
 * The agent CLIs that repositories ask for in `.overseer/environment.yml` (`agent.npm:
 * "@openai/codex@0.171.0"`), installed by the worker outside every image and bound read-only into
 * the runs that use them, so an image need not carry the CLI:
 *
 *   <dir>/<key>/           node_modules/ (the package and its dependencies), `installed`
 *   <dir>/<key>.lock       held (O_EXCL, the holder's pid inside) while one is installed
 *   <dir>/<key>.tmp-<pid>-<rand>/   an install in progress, renamed into place when complete
 *
 * `key` hashes the image digest with the package, one install per image (a CLI with native
 * parts matches the image's libc). npm runs on the host with the worker's own npm settings
 * (registry, CA file) and `--ignore-scripts`: the package named by the repository is fetched
 * and unpacked, none of its code runs on the host. Its commands run inside the sandbox, where
 * a Node-based CLI needs the image's own `node` on PATH.
 */
export interface AgentCliInstall {
  /** The install directory (bound read-only into the sandbox at the same path). */
  root: string;
  /** Its commands (`node_modules/.bin`), first on the run's PATH. */
  binDir: string;
}

export interface AgentCliCacheOptions {
  dir: string;
  /** npm binary. Default `npm` on PATH. */
  npmPath?: string;
  /** Bound of one install. Default 600 000 ms. */
  timeoutMs?: number;
  /** Variables added to npm's environment (`NPM_CONFIG_REGISTRY`…). Default: none. */
  npmEnv?: Readonly<Record<string, string>>;
}

const LOCK_POLL_MS = 50;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class AgentCliCache {
  constructor(private readonly options: AgentCliCacheOptions) {}

  /** `pkg` (`name@version`) installed for runs on the image `digest` (null: the worker's system). */
  async install(pkg: string, digest: string | null): Promise<AgentCliInstall> {
    const key = createHash("sha256")
      .update(`${digest ?? "host"}\n${pkg}`)
      .digest("hex")
      .slice(0, 32);
    const root = path.join(this.options.dir, key);
    const result = { root, binDir: path.join(root, "node_modules", ".bin") };
    if (existsSync(path.join(root, "installed"))) return result;
    await mkdir(this.options.dir, { recursive: true, mode: 0o755 });
    await this.locked(`${root}.lock`, async () => {
      if (existsSync(path.join(root, "installed"))) return;
      const work = `${root}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
      await mkdir(work, { mode: 0o755 });
      try {
        await this.npmInstall(pkg, work);
        await writeFile(path.join(work, "installed"), `${pkg}\n`);
        await rm(root, { recursive: true, force: true });
        await rename(work, root);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    });
    return result;
  }

  private async npmInstall(pkg: string, prefix: string): Promise<void> {
    const npm = this.options.npmPath ?? "npm";
    try {
      await execa(
        npm,
        [
          "install",
          "--prefix",
          prefix,
          "--ignore-scripts",
          "--no-audit",
          "--no-fund",
          "--no-package-lock",
          "--omit=dev",
          "--loglevel=error",
          pkg,
        ],
        {
          timeout: this.options.timeoutMs ?? 600_000,
          stdin: "ignore",
          cwd: prefix,
          env: { ...this.options.npmEnv },
        },
      );
    } catch (error) {
      const failure = error as { code?: string; stderr?: string; shortMessage?: string };
      if (failure.code === "ENOENT")
        throw new Error(`cannot install the agent CLI ${pkg}: ${npm} is not installed on this worker`);
      const detail = (failure.stderr?.trim() || failure.shortMessage || String(error)).slice(-600);
      throw new Error(`cannot install the agent CLI ${pkg} with npm: ${detail}`);
    }
  }

  /** Runs `body` holding `lock` (O_EXCL; a dead holder's lock is taken over). */
  private async locked(lock: string, body: () => Promise<void>): Promise<void> {
    const deadline = Date.now() + (this.options.timeoutMs ?? 600_000) * 2;
    for (;;) {
      try {
        await writeFile(lock, String(process.pid), { flag: "wx", mode: 0o600 });
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const holder = Number.parseInt(await readFile(lock, "utf8").catch(() => ""), 10);
        if (Number.isInteger(holder) && holder > 0 && !isAlive(holder)) {
          await rm(lock, { force: true });
          continue;
        }
        if (Date.now() > deadline) throw new Error(`agent CLI install: lock ${lock} held too long`);
        await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
      }
    }
    try {
      await body();
    } finally {
      await rm(lock, { force: true });
    }
  }
}
