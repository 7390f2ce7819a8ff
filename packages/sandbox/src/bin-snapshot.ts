import { chmod, link, mkdtemp, readdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { sweepDeadWorkerDirs } from "./etc-snapshot.ts";

/**
 * The sandbox's /bin when a run has `commands` (the spec's commands runnable with no environment).
 *
 * A command started with no PATH at all is searched in fixed places only: glibc's execvp (what
 * `env -i NAME` uses) looks in `/bin:/usr/bin`, dash and bash in their built-in default PATH, which
 * holds `/usr/bin` and `/bin` too. Both are read-only binds of the host in a bwrap sandbox and
 * bubblewrap 0.8 has no overlay mounts, so nothing can be added to them in place. On a merged-/usr
 * host, though, `/bin` is only a symlink to `usr/bin`: the sandbox gets instead this directory,
 * bound read-only at /bin, which holds a symlink `NAME -> /usr/bin/NAME` for every entry of the
 * host's /usr/bin (so `/bin/sh`, `#!/bin/bash` and the rest resolve as before) and an empty
 * placeholder file for each command, over which the driver binds the command's host file
 * read-only (`--ro-bind FILE /bin/NAME`). A command given in `linkFrom` is placed as a hard link to
 * its host file instead (the same inode: the same file, content, mode and owner as the bind
 * showed, read-only through the /bin bind), and needs no bind of its own: bwrap parses
 * /proc/self/mountinfo once per bind. Where the link cannot be made (another filesystem), the
 * command gets its placeholder and its bind as before.
 *
 * A snapshot is taken once per driver instance, set of command names and state of /usr/bin (its
 * mtime changes when an entry is added or removed, and a new snapshot is taken then), and removed
 * by `dispose()`. Directories are named `bin-<workerPid>-*`; those of dead workers are removed when
 * a new one is taken.
 */

export interface BinSnapshotInput {
  /** Private runtime root to create the snapshot in. */
  root: string;
  /** The directory /bin points to inside the sandbox (`/usr/bin` on a merged-/usr system). */
  usrBin: string;
  /** Where that directory is on the host. Default `usrBin` (an image's: `<rootfs>/usr/bin`). */
  listFrom?: string;
  /** Names of the commands to place; a host entry of the same name is shadowed by the command. */
  commandNames: readonly string[];
  /** Host files of commands to place as hard links (name → file); the others get placeholders. */
  linkFrom?: Readonly<Record<string, string>>;
}

export interface BinSnapshot {
  dir: string;
  /** The commands placed as hard links: no bind over them. */
  linked: ReadonlySet<string>;
}

/** Creates the snapshot directory: its path and the commands linked into it. */
export async function createBinSnapshot(input: BinSnapshotInput): Promise<BinSnapshot> {
  await sweepDeadWorkerDirs(input.root, "bin");
  const dir = await mkdtemp(join(input.root, `bin-${process.pid}-`));
  await chmod(dir, 0o755);
  const commands = new Set(input.commandNames);
  const entries = (await readdir(input.listFrom ?? input.usrBin)).filter((entry) => !commands.has(entry));
  await Promise.all(entries.map((entry) => symlink(join(input.usrBin, entry), join(dir, entry))));
  const linked = new Set<string>();
  await Promise.all(
    [...commands].map(async (name) => {
      const source = input.linkFrom?.[name];
      if (source !== undefined) {
        try {
          await link(source, join(dir, name));
          linked.add(name);
          return;
        } catch {
          // Another filesystem, or links refused: a placeholder, and the driver binds the file over it.
        }
      }
      await writeFile(join(dir, name), "", { mode: 0o755 });
    }),
  );
  return { dir, linked };
}
