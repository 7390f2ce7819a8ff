import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, resolve } from "node:path";

/**
 * Resolves a command the way execvp would: a name containing `/` is taken as a path (relative
 * to `cwd`), anything else is searched in `PATH` (empty entries mean the cwd, as in POSIX).
 * Returns the absolute path of a regular, executable file, or null. Used by `doctor` and by
 * the runner's "harness not configured" check before spawning.
 */
export function resolveExecutable(
  file: string,
  path: string | undefined,
  cwd: string = process.cwd(),
): string | null {
  if (file.length === 0) return null;
  if (file.includes("/")) {
    const candidate = isAbsolute(file) ? file : resolve(cwd, file);
    return isExecutableFile(candidate) ? candidate : null;
  }
  for (const dir of (path ?? "").split(delimiter)) {
    const candidate = resolve(cwd, dir.length > 0 ? dir : ".", file);
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

function isExecutableFile(candidate: string): boolean {
  try {
    if (!statSync(candidate).isFile()) return false;
    accessSync(candidate, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
