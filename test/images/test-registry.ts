import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  buildDebianRootfs,
  buildHostRootfs,
  type DebianRootfsInput,
  type HostRootfsInput,
} from "@overseer/test-support";
import { execa } from "execa";

/**
 * The images suite's registry and images: Debian's `docker-registry` (the distribution registry)
 * on a loopback port, started per test file, serving OCI images built here from the host's own
 * Debian binaries (`buildHostRootfs`) with umoci. Built images are kept in
 * OVERSEER_TEST_IMAGE_CACHE (default /var/tmp/overseer-test-images), outside the repository, keyed
 * by their recipe, so only the first run pays for the build.
 */

/** Why this machine cannot run the images suite, or null. */
export async function imagesSuiteSkipReason(): Promise<string | null> {
  if (process.getuid?.() !== 0) return "the images suite needs root (umoci unpack keeps the images' owners)";
  for (const tool of ["skopeo", "umoci", "docker-registry", "bwrap"]) {
    const found = await execa("sh", ["-c", `command -v ${tool}`], { reject: false });
    if (found.exitCode !== 0)
      return `${tool} is not installed (apt-get install -y skopeo umoci docker-registry bubblewrap)`;
  }
  return null;
}

export interface TestImageRecipe {
  name: string;
  tag: string;
  /** Assembled from the host's binaries (seconds), or… */
  rootfs?: Omit<HostRootfsInput, "dir">;
  /** …made by debootstrap from Debian packages (minutes, once: the image is cached). */
  debian?: Omit<DebianRootfsInput, "dir" | "mirror">;
  /** Image config variables (`KEY=value`). */
  env?: readonly string[];
  /** Image config user (`1000:1000`). */
  user?: string;
}

const BASE_PROGRAMS = [
  "/usr/bin/sh",
  "/usr/bin/dash",
  "/usr/bin/cat",
  "/usr/bin/ls",
  "/usr/bin/id",
  "/usr/bin/mkdir",
  "/usr/bin/mktemp",
  "/usr/bin/mv",
  "/usr/bin/rm",
  "/usr/bin/env",
  "/usr/bin/awk",
  "/usr/bin/node",
];

/** sh, coreutils, awk and node: what `overseer-agent` and the fake harness need, and no Python. */
export function baseImage(tag = "1"): TestImageRecipe {
  return {
    name: "overseer-test/base",
    tag,
    rootfs: { programs: BASE_PROGRAMS, files: { "/etc/overseer-test-image": "base\n" } },
    env: ["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"],
  };
}

/** The base plus Debian's Python 3.11 with its standard library. */
export function pythonImage(tag = "1"): TestImageRecipe {
  return {
    name: "overseer-test/python",
    tag,
    rootfs: {
      programs: [...BASE_PROGRAMS, "/usr/bin/python3", "/usr/bin/python3.11"],
      trees: ["/usr/lib/python3.11"],
      files: { "/etc/overseer-test-image": "python\n" },
    },
    env: ["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"],
    user: "1000:1000",
  };
}

function recipeKey(recipe: TestImageRecipe): string {
  // A Debian image carries the host's node: a new node is a new image.
  const node = recipe.debian?.hostNode ? process.version : "";
  return createHash("sha256").update(JSON.stringify(recipe)).update(node).digest("hex").slice(0, 16);
}

/** Why this machine cannot build the Debian toolchain images (the images suite's own reasons first), or null. */
export async function toolchainImagesSkipReason(): Promise<string | null> {
  const base = await imagesSuiteSkipReason();
  if (base !== null) return base;
  for (const tool of ["debootstrap", "unshare", "chroot"]) {
    const found = await execa("sh", ["-c", `command -v ${tool}`], { reject: false });
    if (found.exitCode !== 0) return `${tool} is not installed (apt-get install -y debootstrap)`;
  }
  return null;
}

const DEBIAN_ENV = ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"];

/** Debian bookworm minbase with python3 (debootstrap), the host's node, user 1000. */
export function debianPythonImage(tag = "1"): TestImageRecipe {
  return {
    name: "overseer-test/debian-python",
    tag,
    debian: {
      packages: ["python3"],
      hostNode: true,
      files: { "/etc/overseer-test-image": "debian-python\n" },
    },
    env: [...DEBIAN_ENV, "PYTHONDONTWRITEBYTECODE=1"],
    user: "1000:1000",
  };
}

/** Debian bookworm minbase with default-jdk-headless (debootstrap), the host's node, user 1000. */
export function debianJdkImage(tag = "1"): TestImageRecipe {
  return {
    name: "overseer-test/debian-jdk",
    tag,
    debian: {
      packages: ["default-jdk-headless"],
      hostNode: true,
      files: { "/etc/overseer-test-image": "debian-jdk\n" },
    },
    env: [...DEBIAN_ENV, "JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64"],
    user: "1000:1000",
  };
}

const imageStore = process.env.OVERSEER_TEST_IMAGE_CACHE ?? "/var/tmp/overseer-test-images";

/** The OCI layout holding `recipe` (tag `image`), built on first use. */
export async function builtImage(recipe: TestImageRecipe): Promise<string> {
  const layout = path.join(imageStore, `${recipe.name.replace(/\W+/g, "-")}-${recipeKey(recipe)}`);
  if (existsSync(path.join(layout, "index.json"))) return layout;
  await mkdir(imageStore, { recursive: true });
  const work = await mkdtemp(path.join(imageStore, "build-"));
  try {
    const staged = path.join(work, "layout");
    const bundle = path.join(work, "bundle");
    await execa("umoci", ["init", "--layout", staged]);
    await execa("umoci", ["new", "--image", `${staged}:image`]);
    await execa("umoci", ["unpack", "--image", `${staged}:image`, bundle]);
    const started = Date.now();
    if (recipe.debian) await buildDebianRootfs({ dir: path.join(bundle, "rootfs"), ...recipe.debian });
    else await buildHostRootfs({ dir: path.join(bundle, "rootfs"), programs: [], ...recipe.rootfs });
    await execa("umoci", ["repack", "--image", `${staged}:image`, bundle]);
    const config = [
      ...(recipe.env ?? []).flatMap((e) => ["--config.env", e]),
      ...(recipe.user ? ["--config.user", recipe.user] : []),
    ];
    if (config.length > 0) await execa("umoci", ["config", "--image", `${staged}:image`, ...config]);
    await execa("umoci", ["gc", "--layout", staged]);
    await rename(staged, layout).catch(async (error: NodeJS.ErrnoException) => {
      if (!existsSync(path.join(layout, "index.json"))) throw error; // else built by another process
    });
    console.warn(
      `images suite: built ${recipe.name}:${recipe.tag} in ${((Date.now() - started) / 1000).toFixed(1)} s (cached in ${layout})`,
    );
    return layout;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** A distribution registry on 127.0.0.1, plain HTTP, storage in a temporary directory. */
export class TestRegistry {
  private child: ChildProcess | null = null;
  private dir = "";
  host = "";

  /** Listens on `port` (a fixed one other processes were told about), else on a free one. */
  async start(port?: number): Promise<this> {
    this.dir = await mkdtemp(path.join(tmpdir(), "overseer-registry-"));
    port ??= await freePort();
    this.host = `127.0.0.1:${port}`;
    const config = path.join(this.dir, "config.yml");
    await writeFile(
      config,
      [
        "version: 0.1",
        "log:",
        "  level: error",
        "storage:",
        "  filesystem:",
        `    rootdirectory: ${path.join(this.dir, "storage")}`,
        "  delete:",
        "    enabled: true",
        "http:",
        `  addr: ${this.host}`,
        "",
      ].join("\n"),
    );
    this.child = spawn("docker-registry", ["serve", config], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    this.child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const deadline = Date.now() + 20_000;
    for (;;) {
      const ok = await fetch(`http://${this.host}/v2/`)
        .then((r) => r.ok)
        .catch(() => false);
      if (ok) return this;
      if (this.child.exitCode !== null || Date.now() > deadline)
        throw new Error(`docker-registry did not start on ${this.host}: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Pushes `recipe` (built on first use) as `<host>/<name>:<tag>`; returns that reference and its digest. */
  async push(recipe: TestImageRecipe): Promise<{ reference: string; digest: string }> {
    const layout = await builtImage(recipe);
    const reference = `${this.host}/${recipe.name}:${recipe.tag}`;
    const digestFile = path.join(this.dir, `digest-${recipeKey(recipe)}`);
    await execa("skopeo", [
      "copy",
      "--quiet",
      "--dest-tls-verify=false",
      `--digestfile=${digestFile}`,
      `oci:${layout}:image`,
      `docker://${reference}`,
    ]);
    return { reference, digest: (await readFile(digestFile, "utf8")).trim() };
  }

  async stop(): Promise<void> {
    if (this.child && this.child.exitCode === null) {
      const exited = new Promise((r) => this.child?.once("exit", r));
      this.child.kill("SIGTERM");
      await exited;
    }
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}
