/**
 * GitHub App installation tokens shared by the adapters of one process (see
 * `installationTokenCache`); `@octokit/auth-app` reads and writes them through its `cache` option.
 */

/** How long a minted installation token is reused: GitHub's lifetime is 60 minutes. */
const INSTALLATION_TOKEN_REUSE_MS = 50 * 60_000;
const installationTokens = new Map<string, Map<string, { value: string; until: number }>>();

/**
 * The process's installation tokens of one App on one GitHub: adapters are made per job, and
 * each would otherwise mint a token of its own (`@octokit/auth-app` caches per instance).
 */
export function installationTokenCache(apiUrl: string, appId: number) {
  const id = `${apiUrl}\n${appId}`;
  let entries = installationTokens.get(id);
  if (!entries) {
    entries = new Map();
    installationTokens.set(id, entries);
  }
  const cache = entries;
  return {
    get: (key: string) => {
      const entry = cache.get(key);
      return entry && entry.until > Date.now() ? entry.value : undefined;
    },
    set: (key: string, value: string) => {
      cache.set(key, { value, until: Date.now() + INSTALLATION_TOKEN_REUSE_MS });
    },
  };
}
