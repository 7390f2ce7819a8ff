import { execFile } from "node:child_process";
import { chmod, copyFile, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * A Debian root filesystem made the way a distribution image is: `debootstrap --variant=minbase`
 * of bookworm with the listed packages (python3, default-jdk-headless…) from the machine's own
 * Debian mirror, for the images suite's toolchain images. Needs root and debootstrap. Built at
 * test time and cached as an image by the caller, never committed.
 *
 * Test-time CA handling (as the deploy suite's Node base): the machine's extra CA certificates
 * (/usr/local/share/ca-certificates) are copied in and `update-ca-certificates` runs in the
 * rootfs, so TLS clients in the image (pip, the JDK's keystore) trust what the machine trusts.
 * Package scripts that need /proc (ca-certificates-java runs `java`) are configured in a private
 * mount namespace with its own /proc (`unshare --mount`), so no mount outlives the build.
 */
export interface DebianRootfsInput {
  /** Target directory (created, or empty). */
  dir: string;
  /** Packages besides minbase's (`--include`). */
  packages: readonly string[];
  /** Files written into the rootfs: absolute path inside → content. */
  files?: Readonly<Record<string, string>>;
  /** Copy the host's node to /usr/bin/node (the fake harness and the egress bridge run on it). */
  hostNode?: boolean;
  /** Debian mirror. Default: DEBIAN_MIRROR, else the first Debian URI of the apt sources. */
  mirror?: string;
  suite?: string;
}

/** The machine's Debian mirror, as apt is configured (DEBIAN_MIRROR overrides). */
export async function debianMirror(): Promise<string> {
  if (process.env.DEBIAN_MIRROR) return process.env.DEBIAN_MIRROR;
  const files = ["/etc/apt/sources.list"];
  for (const name of await readdir("/etc/apt/sources.list.d").catch(() => [] as string[])) {
    if (name.endsWith(".list") || name.endsWith(".sources"))
      files.push(join("/etc/apt/sources.list.d", name));
  }
  for (const file of files) {
    const text = await readFile(file, "utf8").catch(() => "");
    for (const line of text.split("\n")) {
      if (line.trim().startsWith("#")) continue;
      const match = /(https?:\/\/\S+\/debian)\/?(\s|$)/.exec(line);
      if (match?.[1] !== undefined) return match[1];
    }
  }
  return "http://deb.debian.org/debian";
}

/** The environment of commands in the new rootfs: none of the host's (its TMPDIR is not there). */
const CHROOT_ENV = { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", LANG: "C.UTF-8" };

export async function buildDebianRootfs(input: DebianRootfsInput): Promise<void> {
  const mirror = input.mirror ?? (await debianMirror());
  const include = ["ca-certificates", ...input.packages];
  try {
    await run(
      "debootstrap",
      ["--variant=minbase", `--include=${include.join(",")}`, input.suite ?? "bookworm", input.dir, mirror],
      { maxBuffer: 64 * 1024 * 1024 },
    );
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string };
    const log = await readFile(join(input.dir, "debootstrap/debootstrap.log"), "utf8").catch(() => "");
    throw new Error(
      `debootstrap of ${include.join(", ")} from ${mirror} failed: ${(failure.stderr || failure.stdout || log).slice(-2000)}`,
    );
  }
  const caDir = "/usr/local/share/ca-certificates";
  for (const name of await readdir(caDir).catch(() => [] as string[])) {
    if (name.endsWith(".crt")) await copyFile(join(caDir, name), join(input.dir, caDir, name));
  }
  // Finish what needed /proc (debootstrap leaves such packages half-configured), then the CAs.
  await run(
    "unshare",
    [
      "--mount",
      "--fork",
      "sh",
      "-ec",
      'mount -t proc proc "$1/proc"; chroot "$1" dpkg --configure -a; chroot "$1" update-ca-certificates >/dev/null',
      "sh",
      input.dir,
    ],
    { env: CHROOT_ENV },
  );
  if (input.hostNode) {
    await copyFile(process.execPath, join(input.dir, "usr/bin/node"));
    await chmod(join(input.dir, "usr/bin/node"), 0o755);
  }
  for (const [path, content] of Object.entries(input.files ?? {})) {
    await mkdir(dirname(join(input.dir, path)), { recursive: true });
    await writeFile(join(input.dir, path), content, { mode: 0o644 });
  }
  // What an image does not need: downloaded packages, package lists, the build's log.
  for (const junk of ["var/cache/apt/archives", "var/lib/apt/lists", "debootstrap"]) {
    for (const name of await readdir(join(input.dir, junk)).catch(() => [] as string[])) {
      if (name !== "partial" && name !== "lock")
        await rm(join(input.dir, junk, name), { recursive: true, force: true });
    }
  }
}
