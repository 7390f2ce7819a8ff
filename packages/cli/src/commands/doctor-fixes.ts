import type { SandboxDriverName } from "@overseer/run-contract";

/**
 * The command (or the edit) that fixes each kind of failed doctor check. Every failing check
 * names its fix, so a fresh server is set up by following doctor's output line by line.
 */

interface ErrorWithCode {
  code?: string;
  message?: string;
}

/** Postgres could not be queried: a missing database, a server that is down, a refused login. */
export function postgresFix(error: unknown, databaseUrl: string): string {
  const { code, message = "" } = error as ErrorWithCode;
  const database = new URL(databaseUrl).pathname.replace(/^\//, "") || "postgres";
  if (code === "3D000" || /database .* does not exist/.test(message)) {
    return `database ${database} does not exist: run \`overseer init --project ID --repo PATH\` (it creates the database and its schema)`;
  }
  if (code === "28P01" || code === "28000") {
    return "the server refused the login: fix the user or password in DATABASE_URL";
  }
  if (code === "42501") {
    return "the role lacks a privilege: connect as a role that owns the database (DATABASE_URL)";
  }
  return "start PostgreSQL (Debian: `sudo service postgresql start`) or point DATABASE_URL at a running server";
}

export const MIGRATIONS_FIX =
  "run `overseer init --project ID --repo PATH` or start the coordinator: both apply them";

export const REDIS_FIX =
  "start Redis (Debian: `sudo service redis-server start`, or `redis-server --daemonize yes`) or point REDIS_URL at a running server";

export const GIT_FIX = "install git (Debian: `sudo apt-get install git`)";

/** The configured sandbox driver is not available on this host. */
export function sandboxDriverFix(driver: SandboxDriverName): string {
  switch (driver) {
    case "bwrap":
      return process.platform === "linux"
        ? "install bubblewrap (Debian: `sudo apt-get install bubblewrap`)"
        : "bubblewrap needs Linux: run the workers on a Linux host or in the compose cluster's Linux containers (docker-compose.yml)";
    case "gvisor":
      return "install gVisor (Debian: `sudo apt-get install runsc`, or a current release from https://gvisor.dev/docs/user_guide/install/), or set OVERSEER_SANDBOX=bwrap";
    case "none":
      return "set OVERSEER_SANDBOX=bwrap (recommended) or, knowingly, OVERSEER_SANDBOX_UNSAFE_NONE=1";
  }
}

/** A live sandbox probe failed: the driver runs but does not isolate as required. */
export function sandboxProbeFix(driver: SandboxDriverName): string {
  if (driver === "gvisor")
    return "see the probe's problems above; as a non-root worker runsc runs --rootless and needs user namespaces; inside a container it needs a seccomp profile allowing unshare, mount, pivot_root and chroot (infra/seccomp-bwrap.json; infra/README.md, Project images), else use bwrap there";
  return driver === "bwrap"
    ? "allow unprivileged user namespaces (`sudo sysctl -w kernel.unprivileged_userns_clone=1`; on Ubuntu 24.04+ also `sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`); inside a container see docker-compose.yml; see packages/sandbox/README.md"
    : "set OVERSEER_SANDBOX=bwrap";
}

export function runnerConfigFix(projectId: string): string {
  return `correct the fields above in a runner.json and run \`overseer init --project ${projectId} --update --config runner.json\``;
}

export function harnessNotConfiguredFix(projectId: string, key: string): string {
  return `set "argv" or "${key}" in the runner config, then \`overseer init --project ${projectId} --update --config runner.json\``;
}

export function harnessNotFoundFix(executable: string): string {
  return `install ${executable} on every worker, or give its absolute path in the runner config`;
}

export function deepProbeFix(projectId: string): string {
  return `run the project's probe_argv by hand in a checkout of ${projectId} to see why it fails`;
}

/** The agent CLI does not start inside the run's sandbox. */
export function cliInSandboxFix(cli: string, projectId: string): string {
  return cli.startsWith("/")
    ? `make ${cli} visible inside the sandbox: add its install dir (the npm prefix) to sandbox.read_only_paths (\`overseer init --project ${projectId} --update --agent NAME --agent-bin ${cli}\` does it, with the key in the environment and the --model, --base-url and --config you gave at first), or install the CLI under /usr on every worker`
    : `install ${cli} under /usr on every worker (\`npm install -g --prefix /usr/local …\`), or give its absolute path with \`overseer init --project ${projectId} --update --agent NAME --agent-bin PATH\` (with the key in the environment and the --model, --base-url and --config you gave at first)`;
}

/** Key variables that do not arrive inside the sandbox. */
export function authVariablesFix(
  projectId: string,
  missing: readonly string[],
  agent: string | null,
): string {
  const assign = missing.map((name) => `${name}=…`).join(" ");
  return agent
    ? `export ${assign} and run \`overseer init --project ${projectId} --update --agent ${agent}\` again with the same --model, --base-url, --agent-bin and --config as before (the key is stored in the project's secrets, redacted everywhere)`
    : `set ${missing.join(", ")} in the runner config's "secrets" (or "env_allow" with the variable set on every worker), then \`overseer init --project ${projectId} --update --config runner.json\``;
}

/** No probe_argv that reaches the model. */
export function probeArgvFix(projectId: string): string {
  return `set "probe_argv" to a call that reaches the model without changing anything (presets write the run command; \`overseer init --project ${projectId} --update --agent NAME\` refreshes it)`;
}
