import { randomBytes } from "node:crypto";
import {
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  unlink,
  utimes,
  writeFile,
} from "node:fs/promises";
import { join } from "node:path";
import { isProcessAlive } from "@overseer/process";
import { execa } from "execa";
import {
  type ImageRuntimeConfig,
  type ImageToolOptions,
  pullAndUnpack,
  readRuntimeConfig,
  resolveImageDigest,
} from "./image-pull.ts";
import { SandboxSpecError } from "./sandbox-errors.ts";

/**
 * The worker's content-addressed cache of unpacked run images: one read-only rootfs per digest,
 * shared by every run on it, pulled and unpacked once.
 *
 *   <dir>/images/<hex>/     rootfs/, config.json (umoci), meta.json (size, env, user; its mtime is the last use)
 *   <dir>/locks/<hex>.lock  held (O_EXCL, the holder's pid inside) while an entry is pulled, taken or evicted
 *   <dir>/leases/<hex>.<pid>.<rand>  one per run using an entry: eviction spares leased entries
 *   <dir>/tmp/<pid>-<rand>/ pulls in progress: renamed into images/ when complete
 *
 * Safe against concurrent pulls, in one worker and across workers sharing the directory: an
 * entry appears by one atomic rename of a complete bundle, under its lock, so a run sees a whole
 * rootfs or none. Least recently used entries go when the cache outgrows `maxBytes`, never one
 * a live run (of any worker) holds.
 */

export interface ImageCacheOptions extends ImageToolOptions {
  dir: string;
  /** Size bound of the unpacked images. Default 20 GiB. */
  maxBytes?: number;
  /** How long a tag's digest is reused before the registry is asked again. Default 60 000 ms. */
  tagTtlMs?: number;
}

/** One run's hold on a cached image; `release()` when the run ends. */
export interface CachedImage {
  reference: string;
  digest: string;
  /** The unpacked root filesystem (read-only for runs: the sandbox binds it so). */
  rootfs: string;
  config: ImageRuntimeConfig;
  sizeBytes: number;
  /** Whether this acquire pulled and unpacked the image (false: a cache hit). */
  pulled: boolean;
  release(): Promise<void>;
}

interface EntryMeta extends ImageRuntimeConfig {
  reference: string;
  digest: string;
  sizeBytes: number;
  pulledAt: string;
}

const LOCK_POLL_MS = 20;

export class ImageCache {
  private readonly maxBytes: number;
  private readonly tagTtlMs: number;
  private readonly tags = new Map<string, { digest: string; at: number }>();
  /** Metadata of the digests this instance found or unpacked (immutable per digest). */
  private readonly metas = new Map<string, EntryMeta>();
  private dirs: Promise<void> | null = null;

  constructor(private readonly options: ImageCacheOptions) {
    if (!options.dir.startsWith("/"))
      throw new SandboxSpecError(`image cache dir: expected an absolute path, received ${options.dir}`);
    this.maxBytes = options.maxBytes ?? 20 * 1024 ** 3;
    this.tagTtlMs = options.tagTtlMs ?? 60_000;
  }

  private path(...parts: string[]): string {
    return join(this.options.dir, ...parts);
  }

  /** The image `reference` names now, unpacked and held for one run. */
  async acquire(reference: string): Promise<CachedImage> {
    const digest = await this.digestOf(reference);
    const hex = digest.replace(/^sha256:/, "");
    if (!/^[a-f0-9]{64}$/.test(hex))
      throw new SandboxSpecError(`image digest: expected sha256, got ${digest}`);
    await this.ensureDirs();
    let pulled = false;
    const { meta, lease } = await this.locked(hex, async () => {
      let meta = await this.touchedMeta(hex);
      if (meta === null) {
        meta = await this.pull(reference, digest, hex);
        pulled = true;
        this.metas.set(hex, meta);
      }
      const lease = this.path("leases", `${hex}.${process.pid}.${randomBytes(6).toString("hex")}`);
      await writeFile(lease, "");
      return { meta, lease };
    });
    if (pulled) await this.evict().catch(() => undefined);
    return {
      reference,
      digest,
      rootfs: this.path("images", hex, "rootfs"),
      config: { env: meta.env, uid: meta.uid, gid: meta.gid, workingDir: meta.workingDir },
      sizeBytes: meta.sizeBytes,
      pulled,
      release: () => unlink(lease).catch(() => undefined),
    };
  }

  private async digestOf(reference: string): Promise<string> {
    const known = this.tags.get(reference);
    if (known !== undefined && Date.now() - known.at < this.tagTtlMs) return known.digest;
    const digest = await resolveImageDigest(reference, this.options);
    if (!reference.includes("@")) this.tags.set(reference, { digest, at: Date.now() });
    return digest;
  }

  /** The cache's directories, made once per instance (again after one went missing). */
  private ensureDirs(): Promise<void> {
    this.dirs ??= (async () => {
      for (const sub of ["images", "locks", "leases", "tmp"])
        await mkdir(this.path(sub), { recursive: true, mode: 0o700 });
    })().catch((error) => {
      this.dirs = null;
      throw error;
    });
    return this.dirs;
  }

  /**
   * A cached entry's metadata, its last use set to now (LRU), or null when the digest is not
   * unpacked here. The metadata of a digest never changes, so it is read once per instance; the
   * touch itself proves the entry is still there (another process may have evicted it).
   */
  private async touchedMeta(hex: string): Promise<EntryMeta | null> {
    const now = new Date();
    const known = this.metas.get(hex);
    try {
      await utimes(this.path("images", hex, "meta.json"), now, now);
    } catch {
      this.metas.delete(hex);
      return null;
    }
    if (known !== undefined) return known;
    const meta = await this.readMeta(hex);
    if (meta !== null) this.metas.set(hex, meta);
    return meta;
  }

  private async readMeta(hex: string): Promise<EntryMeta | null> {
    try {
      return JSON.parse(await readFile(this.path("images", hex, "meta.json"), "utf8")) as EntryMeta;
    } catch {
      return null;
    }
  }

  private async pull(reference: string, digest: string, hex: string): Promise<EntryMeta> {
    await this.sweepTmp();
    const work = this.path("tmp", `${process.pid}-${randomBytes(6).toString("hex")}`);
    await mkdir(work, { mode: 0o700 });
    try {
      const bundle = await pullAndUnpack(reference, digest, work, this.options);
      const config = await readRuntimeConfig(bundle);
      const { stdout } = await execa("du", ["-s", "--block-size=1", join(bundle, "rootfs")]);
      const meta: EntryMeta = {
        reference,
        digest,
        sizeBytes: Number.parseInt(stdout, 10) || 0,
        pulledAt: new Date().toISOString(),
        ...config,
      };
      await writeFile(join(bundle, "meta.json"), `${JSON.stringify(meta)}\n`, { mode: 0o600 });
      await rename(bundle, this.path("images", hex));
      return meta;
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  /** Runs `body` holding the entry's lock file (a dead holder's lock is taken over). */
  private async locked<T>(hex: string, body: () => Promise<T>): Promise<T> {
    const lock = this.path("locks", `${hex}.lock`);
    const deadline = Date.now() + (this.options.timeoutMs ?? 600_000) * 2;
    for (;;) {
      try {
        const handle = await open(lock, "wx", 0o600);
        await handle.writeFile(String(process.pid));
        await handle.close();
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
        const holder = Number.parseInt(await readFile(lock, "utf8").catch(() => ""), 10);
        if (Number.isInteger(holder) && holder > 0 && !isProcessAlive(holder)) {
          await unlink(lock).catch(() => undefined);
          continue;
        }
        if (Date.now() > deadline) throw new SandboxSpecError(`image ${hex}: lock ${lock} held too long`);
        await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
      }
    }
    try {
      return await body();
    } finally {
      await unlink(lock).catch(() => undefined);
    }
  }

  /** Leased entries (a live process holds a lease); dead holders' leases are removed. */
  private async leasedEntries(): Promise<Set<string>> {
    const leased = new Set<string>();
    for (const name of await readdir(this.path("leases")).catch(() => [] as string[])) {
      const [hex, pid] = name.split(".");
      if (hex !== undefined && isProcessAlive(Number(pid))) leased.add(hex);
      else await unlink(this.path("leases", name)).catch(() => undefined);
    }
    return leased;
  }

  /** Removes least recently used, unleased entries until the cache fits `maxBytes`. */
  async evict(): Promise<string[]> {
    const entries: { hex: string; size: number; usedAt: number }[] = [];
    for (const hex of await readdir(this.path("images")).catch(() => [] as string[])) {
      const meta = await this.readMeta(hex);
      const info = await stat(this.path("images", hex, "meta.json")).catch(() => null);
      if (meta !== null && info !== null) entries.push({ hex, size: meta.sizeBytes, usedAt: info.mtimeMs });
    }
    let total = entries.reduce((sum, entry) => sum + entry.size, 0);
    const evicted: string[] = [];
    for (const entry of entries.sort((a, b) => a.usedAt - b.usedAt)) {
      if (total <= this.maxBytes) break;
      const gone = await this.locked(entry.hex, async () => {
        if ((await this.leasedEntries()).has(entry.hex)) return false;
        const trash = this.path("tmp", `${process.pid}-evict-${entry.hex}`);
        await rename(this.path("images", entry.hex), trash);
        await rm(trash, { recursive: true, force: true });
        return true;
      });
      if (gone) {
        total -= entry.size;
        evicted.push(`sha256:${entry.hex}`);
      }
    }
    return evicted;
  }

  /** Removes half-done pulls of dead workers. */
  private async sweepTmp(): Promise<void> {
    for (const name of await readdir(this.path("tmp")).catch(() => [] as string[])) {
      const pid = Number(name.split("-")[0]);
      if (pid !== process.pid && !isProcessAlive(pid))
        await rm(this.path("tmp", name), { recursive: true, force: true }).catch(() => undefined);
    }
  }
}
