import { access, constants } from "node:fs/promises";
import { join } from "node:path";

/** Whether the worker may access `path` with `mode` (default `F_OK`: the path exists). */
export async function canAccess(path: string, mode: number = constants.F_OK): Promise<boolean> {
  try {
    await access(path, mode);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `binary` in a `PATH` directory (`/usr/bin:/bin` when PATH is unset), or null. */
export async function findOnPath(binary: string): Promise<string | null> {
  for (const dir of (process.env.PATH ?? "/usr/bin:/bin").split(":")) {
    if (dir === "") continue;
    const candidate = join(dir, binary);
    if (await canAccess(candidate, constants.X_OK)) return candidate;
  }
  return null;
}
