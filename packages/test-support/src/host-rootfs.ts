import { execFile } from "node:child_process";
import { chmod, cp, lstat, mkdir, readlink, realpath, symlink, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A small root filesystem assembled from the host's own Debian binaries (a merged-/usr layout):
 * the listed programs, the shared libraries they load (ldd), whole trees such as a language's
 * standard library, and literal files. Tests build run images from it (umoci) in seconds, where
 * debootstrap takes minutes; the programs are real Debian builds, so a toolchain in the image is
 * the genuine one.
 */
export interface HostRootfsInput {
  /** Target directory (created). */
  dir: string;
  /** Host programs copied with their shared libraries (a symlink is kept and its target copied). */
  programs: readonly string[];
  /** Host directories copied whole (their `.so` files' libraries included). */
  trees?: readonly string[];
  /** Files written into the rootfs: absolute path inside → content. */
  files?: Readonly<Record<string, string>>;
}

/** The merged-/usr links every Debian rootfs has. */
const USR_MERGE: Readonly<Record<string, string>> = {
  "/bin": "usr/bin",
  "/sbin": "usr/sbin",
  "/lib": "usr/lib",
  "/lib64": "usr/lib64",
};

export async function buildHostRootfs(input: HostRootfsInput): Promise<void> {
  await mkdir(join(input.dir, "usr"), { recursive: true });
  for (const [link, target] of Object.entries(USR_MERGE)) {
    await mkdir(join(input.dir, "usr", target.slice(4)), { recursive: true });
    await symlink(target, join(input.dir, link)).catch(ignoreExisting);
  }
  for (const sub of ["etc", "tmp", "proc", "dev"]) await mkdir(join(input.dir, sub), { recursive: true });
  await chmod(join(input.dir, "tmp"), 0o1777);
  const elves = new Set<string>();
  for (const program of input.programs) elves.add(await copyPath(input.dir, program));
  for (const tree of input.trees ?? []) {
    await copyPath(input.dir, tree);
    const { stdout } = await run("find", [await realpath(tree), "-name", "*.so*", "-type", "f"]);
    for (const file of stdout.split("\n").filter(Boolean)) elves.add(file);
  }
  for (const library of await sharedLibraries([...elves])) await copyPath(input.dir, library);
  for (const [path, content] of Object.entries(input.files ?? {})) {
    await mkdir(dirname(join(input.dir, path)), { recursive: true });
    await writeFile(join(input.dir, path), content, { mode: 0o644 });
  }
}

function ignoreExisting(error: NodeJS.ErrnoException): void {
  if (error.code !== "EEXIST") throw error;
}

/** Host path as it sits in a merged-/usr tree (`/lib/x.so` is `/usr/lib/x.so`). */
function usrPath(path: string): string {
  for (const [link, target] of Object.entries(USR_MERGE)) {
    if (path.startsWith(`${link}/`)) return `/${target}${path.slice(link.length)}`;
  }
  return path;
}

/** Copies `path` (a symlink chain is kept link by link) and returns the real file's host path. */
async function copyPath(root: string, path: string): Promise<string> {
  const inside = usrPath(path);
  const target = join(root, inside);
  await mkdir(dirname(target), { recursive: true });
  const info = await lstat(path);
  if (info.isSymbolicLink()) {
    const link = await readlink(path);
    await symlink(link, target).catch(ignoreExisting);
    return copyPath(root, resolve(dirname(path), link));
  }
  await cp(path, target, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true, force: false });
  return path;
}

/** Every shared library (and the dynamic loader) `files` load, by ldd. */
async function sharedLibraries(files: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const file of files) {
    const { stdout } = await run("ldd", [file]).catch(() => ({ stdout: "" }));
    for (const line of stdout.split("\n")) {
      const match = /(?:=>\s*)?(\/\S+)\s+\(0x/.exec(line);
      if (match?.[1] !== undefined) found.add(match[1]);
    }
  }
  return [...found];
}
