/**
 * Repository locations a project may name (`overseer init --repo`, `POST /api/v1/projects`):
 * a local path, a `file://`, `http(s)://`, `ssh://` or `git://` URL, or scp-like
 * `user@host:path`. git also understands remote helpers (`ext::sh -c …` runs a command) and
 * passes an ssh host to `ssh` as an argument (`ssh://-oProxyCommand=…` runs one too). The
 * worker's git refuses them, but they are refused here first, where the operator can fix them.
 */

const URL_SCHEMES = new Set(["file:", "http:", "https:", "ssh:", "git:", "git+ssh:", "ssh+git:"]);
/** `<transport>::<address>`: git's remote-helper syntax (`ext::`, `fd::`, …). */
const REMOTE_HELPER = /^[A-Za-z][A-Za-z0-9+.-]*::/;
const URL_LIKE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
/** scp-like `[user@]host:path` (no slash before the colon). */
const SCP_LIKE = /^(?:([^@/:]+)@)?([^/:]+):(.*)$/;

/**
 * Why `location` is not an acceptable repository location (a short phrase such as "uses the
 * ext:: remote helper, which runs a command"), or undefined when it is fine.
 */
export function findRepositoryLocationProblem(location: string): string | undefined {
  if (location.trim() === "") return "is empty";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (/[\u0000-\u001f\u007f]/.test(location)) return "contains control characters";
  if (location.startsWith("-")) return "starts with -, which git would read as an option";
  const helper = REMOTE_HELPER.exec(location);
  if (helper) return `uses the ${helper[0]} remote helper syntax, which can run commands; use a path or URL`;
  if (URL_LIKE.test(location)) {
    if (!URL.canParse(location)) return "is not a valid URL";
    const url = new URL(location);
    if (!URL_SCHEMES.has(url.protocol))
      return `uses the ${url.protocol}// scheme; use file://, http(s)://, ssh:// or git://`;
    const host = safeDecode(url.hostname);
    const user = safeDecode(url.username);
    if (host.startsWith("-") || user.startsWith("-"))
      return "has a host or user starting with -, which ssh would read as an option";
    if (url.protocol !== "file:" && host === "") return "has no host";
    return undefined;
  }
  const scp = SCP_LIKE.exec(location);
  if (scp && !location.startsWith("/") && !location.startsWith(".")) {
    const [, user = "", host = ""] = scp;
    if (host.startsWith("-") || user.startsWith("-"))
      return "has a host or user starting with -, which ssh would read as an option";
  }
  return undefined;
}

function safeDecode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
