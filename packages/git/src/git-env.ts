/**
 * The environment of every git process (run-git.ts has the threat model): the worker's own
 * environment without inherited `GIT_*` variables (except {@link INHERITED_GIT_VARS}), then
 * {@link HARDENING_ENV}, then the caller's extras (never the config isolation).
 *
 * Cost. Reading `process.env` goes through the host for every variable: a walk of it is about
 * a third of a millisecond under load, on each of a run's dozen git calls. So the walk is done
 * once and kept while `process.env` is the same object; only the variables that choose which
 * configuration, credentials and programs git uses ({@link LIVE_VARS}: the kept `GIT_*`
 * variables, `HOME`, `XDG_CONFIG_HOME`, `PATH`) are read again on every call, a handful of
 * lookups, so an operator's trace switch or a changed home set at run time still reaches git.
 * Any other variable changed in place after the first git call is not seen (nothing in Overseer
 * writes `process.env` at run time); assigning a new object to `process.env` is.
 */

/** Environment always set on git processes (after the inherited environment is filtered). */
export const HARDENING_ENV: Readonly<Record<string, string>> = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_TERMINAL_PROMPT: "0",
  GIT_ATTR_NOSYSTEM: "1",
  GIT_OPTIONAL_LOCKS: "0",
  LC_ALL: "C",
  LANGUAGE: "C",
  GIT_EDITOR: ":",
  GIT_PAGER: "cat",
};

/** Inherited `GIT_*` variables that are kept: how the host reaches remotes, never repository layout. */
export const INHERITED_GIT_VARS: ReadonlySet<string> = new Set([
  "GIT_SSH",
  "GIT_SSH_COMMAND",
  "GIT_SSH_VARIANT",
  "GIT_ASKPASS",
  "GIT_SSL_CAINFO",
  "GIT_SSL_CAPATH",
  "GIT_SSL_NO_VERIFY",
  "GIT_PROXY_COMMAND",
  "GIT_HTTP_USER_AGENT",
  // Operator-side tracing (`GIT_TRACE2_EVENT=/tmp/t.json` counts processes); never set by us.
  "GIT_TRACE",
  "GIT_TRACE2",
  "GIT_TRACE2_EVENT",
  "GIT_TRACE2_PERF",
]);

/** Read from `process.env` on every call; the rest of it is read once. */
const LIVE_VARS: readonly string[] = [...INHERITED_GIT_VARS, "HOME", "XDG_CONFIG_HOME", "PATH"];
const LIVE = new Set(LIVE_VARS);

export interface GitEnvOptions {
  /** Keep the host's system and global configuration (no `GIT_CONFIG_NOSYSTEM`/`GIT_CONFIG_GLOBAL`). */
  hostConfig?: boolean | undefined;
  /** Extra variables over the hardening ones; `GIT_CONFIG_*` among them are ignored. */
  env?: Record<string, string> | undefined;
}

interface Snapshot {
  source: NodeJS.ProcessEnv;
  /** The walked environment without the live variables, with HARDENING_ENV over it. */
  isolated: Record<string, string>;
  /** The same for `hostConfig`. */
  host: Record<string, string>;
}

let snapshot: Snapshot | null = null;

function takeSnapshot(source: NodeJS.ProcessEnv): Snapshot {
  const inherited: Record<string, string> = {};
  for (const [key, value] of Object.entries(source)) {
    if (value === undefined || LIVE.has(key) || key.startsWith("GIT_")) continue;
    inherited[key] = value;
  }
  const isolated = { ...inherited, ...HARDENING_ENV };
  const host: Record<string, string> = { ...isolated };
  delete host.GIT_CONFIG_NOSYSTEM;
  delete host.GIT_CONFIG_GLOBAL;
  return { source, isolated, host };
}

/** The environment a git process gets: a new object each call. */
export function gitEnv(options: GitEnvOptions = {}): Record<string, string> {
  const source = process.env;
  if (snapshot?.source !== source) snapshot = takeSnapshot(source);
  const env = { ...(options.hostConfig ? snapshot.host : snapshot.isolated) };
  for (const key of LIVE_VARS) {
    const value = source[key];
    if (value !== undefined) env[key] = value;
  }
  if (options.env) {
    for (const [key, value] of Object.entries(options.env)) {
      // The config isolation is not something a caller may loosen through env; use hostConfig.
      if (key.startsWith("GIT_CONFIG_")) continue;
      env[key] = value;
    }
  }
  return env;
}
