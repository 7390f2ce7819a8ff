import picomatch from "picomatch";

/**
 * Glob rules shared by task scopes, runner `metadata_globs` and the scope matcher.
 *
 * Scope globs are an allow-list of checkout-relative paths, so anything that could widen it
 * by accident is refused rather than interpreted: absolute paths and `..` segments point
 * outside the checkout, a leading `!` would turn "may change X" into "may change everything
 * but X", and control characters are never intended. Matching is posix, case-sensitive,
 * dotfiles included (`**` covers `.github/…`), negation disabled.
 */
export const SCOPE_GLOB_OPTIONS: picomatch.PicomatchOptions = Object.freeze({
  dot: true,
  windows: false,
  nonegate: true,
});

/** What a valid scope glob looks like, for `expected …` messages. */
export const SCOPE_GLOB_EXPECTED =
  "a checkout-relative glob such as src/** (not absolute, no .. segments, no leading !, no control characters)";

/**
 * Why `glob` is not an acceptable scope glob, as a short phrase ("is absolute"), or
 * undefined when it is fine.
 */
export function findGlobProblem(glob: string): string | undefined {
  if (glob.trim() === "") return "is empty";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we reject
  if (/[\u0000-\u001f\u007f]/.test(glob)) return "contains control characters";
  if (glob !== glob.trim()) return "has leading or trailing whitespace";
  if (glob.startsWith("/") || glob.startsWith("\\") || /^[A-Za-z]:[\\/]/.test(glob) || /^~(\/|$)/.test(glob))
    return "is absolute";
  if (glob.split("/").includes("..")) return "has a .. segment";
  if (glob.startsWith("!")) return "is negated (leading !); list the allowed paths instead";
  const unclosed = findUnclosedBracket(glob);
  if (unclosed) return `has an unclosed ${unclosed} (write \\${unclosed} for a literal one)`;
  try {
    picomatch.makeRe(normalizeGlob(glob), { ...SCOPE_GLOB_OPTIONS, debug: true });
  } catch (error) {
    return `cannot be compiled (${(error as Error).message})`;
  }
  return undefined;
}

/** `docs/` means everything under docs: a trailing slash gets `**` appended. */
export function normalizeGlob(glob: string): string {
  return glob.endsWith("/") ? `${glob}**` : glob;
}

/**
 * Whether an unescaped `[` is never closed. picomatch reads it as a literal and would match a
 * path nobody meant (`[[[` matches only a file named `[[[`), so it is refused. (An unclosed
 * `{` already fails to compile.)
 */
function findUnclosedBracket(glob: string): "[" | undefined {
  let open = false;
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === "\\") i++;
    else if (ch === "[") open = true;
    else if (ch === "]") open = false;
  }
  return open ? "[" : undefined;
}
