import fs from "node:fs";
import path from "node:path";

/**
 * Whether a repository's packs hold an object, read from their `.idx` files (gitformat-pack,
 * "pack-*.idx files have the following format", version 2) without a git process:
 *
 *   - a 4-byte magic `\377tOc` and the version, 2;
 *   - the fan-out table: 256 big-endian counts, entry N the number of objects whose first
 *     byte is ≤ N;
 *   - the sorted 20-byte object names (SHA-1; the later tables are not read).
 *
 * A lookup reads the names of the object's first byte (one `pread` for a bucket of up to
 * {@link BUCKET_READ_LIMIT} names, a binary search of 20-byte reads above) and searches them.
 * The list of packs is taken when the object is first asked for; a pack written later is not
 * seen (its objects are then "not packed", which a caller that copies the missing ones answers
 * with a redundant copy, never with a missing object).
 *
 * `has` answers null, for the caller to ask git, when an index is of another kind than version 2
 * over SHA-1 names (version 1, SHA-256) or cannot be read.
 */
export class PackIndexes {
  private packs: PackIndex[] | null | undefined;

  /** `bucketReadLimit`: names read in one call at most (above, a binary search; tests lower it). */
  constructor(
    private readonly gitDir: string,
    private readonly bucketReadLimit = BUCKET_READ_LIMIT,
  ) {}

  has(sha: string): boolean | null {
    const packs = this.open();
    if (packs === null) return null;
    const name = Buffer.from(sha, "hex");
    for (const pack of packs) {
      if (pack.has(name)) return true;
    }
    return false;
  }

  /** Closes the indexes' files; a later `has` opens them again. */
  close(): void {
    for (const pack of this.packs ?? []) pack.close();
    this.packs = undefined;
  }

  private open(): PackIndex[] | null {
    if (this.packs !== undefined) return this.packs;
    const dir = path.join(this.gitDir, "objects", "pack");
    let names: string[];
    try {
      names = fs.readdirSync(dir).filter((name) => name.startsWith("pack-") && name.endsWith(".idx"));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      names = [];
    }
    const packs: PackIndex[] = [];
    for (const name of names) {
      const pack = PackIndex.open(path.join(dir, name), this.bucketReadLimit);
      if (pack === null) {
        for (const opened of packs) opened.close();
        this.packs = null;
        return null;
      }
      if (pack !== "gone") packs.push(pack);
    }
    this.packs = packs;
    return packs;
  }
}

const MAGIC = 0xff744f63;
const HEADER = 8;
const FANOUT = 256 * 4;
const NAME = 20;
/** Names read in one call; a larger bucket (a pack of millions of objects) is binary searched. */
const BUCKET_READ_LIMIT = 1024;

class PackIndex {
  private constructor(
    private readonly fd: number,
    private readonly fanout: Buffer,
    private readonly bucketReadLimit: number,
  ) {}

  /** The index, "gone" when it was deleted meanwhile (a repack), null when it is not version 2. */
  static open(file: string, bucketReadLimit: number): PackIndex | "gone" | null {
    let fd: number;
    try {
      fd = fs.openSync(file, "r");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return "gone";
      return null;
    }
    const head = Buffer.alloc(HEADER + FANOUT);
    const read = fs.readSync(fd, head, 0, head.length, 0);
    if (read !== head.length || head.readUInt32BE(0) !== MAGIC || head.readUInt32BE(4) !== 2) {
      fs.closeSync(fd);
      return null;
    }
    return new PackIndex(fd, head.subarray(HEADER), bucketReadLimit);
  }

  has(name: Buffer): boolean {
    const first = name[0] as number;
    let lo = first === 0 ? 0 : this.fanout.readUInt32BE((first - 1) * 4);
    let hi = this.fanout.readUInt32BE(first * 4);
    if (hi - lo <= this.bucketReadLimit) {
      const bucket = this.names(lo, hi - lo);
      for (let i = 0; i < hi - lo; i++) {
        if (bucket.compare(name, 0, NAME, i * NAME, (i + 1) * NAME) === 0) return true;
      }
      return false;
    }
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const order = this.names(mid, 1).compare(name);
      if (order === 0) return true;
      if (order < 0) lo = mid + 1;
      else hi = mid;
    }
    return false;
  }

  close(): void {
    fs.closeSync(this.fd);
  }

  private names(from: number, count: number): Buffer {
    const buffer = Buffer.alloc(count * NAME);
    fs.readSync(this.fd, buffer, 0, buffer.length, HEADER + FANOUT + from * NAME);
    return buffer;
  }
}
