import { constants } from "node:fs";
import { lstat, mkdir, open } from "node:fs/promises";
import path from "node:path";

/**
 * Places configured files (`.env` from the secret store, say) into a fresh checkout before
 * the agent runs. Each path component is checked with lstat and the file is opened with
 * O_NOFOLLOW | O_EXCL, so a symlink committed into the repository cannot redirect the write
 * outside the checkout.
 */
export async function placeCheckoutFiles(
  checkout: string,
  files: Readonly<Record<string, string>>,
): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const segments = relative.split("/");
    if (segments.some((s) => s === "" || s === "." || s === "..") || segments[0] === ".git") {
      throw new Error(`refusing to place "${relative}": not a plain checkout-relative path`);
    }
    let dir = checkout;
    for (const segment of segments.slice(0, -1)) {
      dir = path.join(dir, segment);
      const info = await lstat(dir).catch(() => null);
      if (info === null) await mkdir(dir, { mode: 0o755 });
      else if (!info.isDirectory())
        throw new Error(`refusing to place "${relative}": ${dir} is not a directory`);
    }
    const target = path.join(checkout, relative);
    const existing = await lstat(target).catch(() => null);
    if (existing && !existing.isFile())
      throw new Error(`refusing to place "${relative}": it exists and is not a regular file`);
    const handle = await open(
      target,
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      await handle.writeFile(content, "utf8");
    } finally {
      await handle.close();
    }
  }
}
