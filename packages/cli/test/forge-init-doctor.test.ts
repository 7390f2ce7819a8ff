// `overseer init --forge` and doctor's forge rights check, against the GitHub double (real git
// over smart HTTP, every REST request and answer validated against @octokit/openapi).
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { createScratchDatabase, requireProject, type ScratchDatabase } from "@overseer/db";
import { REDACTED } from "@overseer/input-errors";
import { parseRunnerConfig } from "@overseer/project-config";
import { GiteaDouble, GitHubDouble, GitLabDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { forgeRightsChecks } from "../src/commands/doctor-forge-check.ts";
import { forgeFromFlags, inferRepository } from "../src/commands/init-forge.ts";
import { type CliIo, runCli } from "../src/index.ts";

const REPO = "acme/app";
const FULL = { login: "overseer-bot", token: "ghp_fullRightsToken0123456789abcdef" };
const RESTRICTED = {
  login: "reader",
  token: "ghp_readOnlyToken0123456789abcdefg",
  role: "read",
  checksRead: false,
} as const;

let scratch: ScratchDatabase;
let forge: GitHubDouble;
let dir: string;

function io(env: Record<string, string> = {}): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (l) => stdout.push(l),
    err: (l) => stderr.push(l),
    env: {
      DATABASE_URL: scratch.url,
      REDIS_URL: "redis://127.0.0.1:6379",
      PATH: process.env.PATH,
      OVERSEER_DATA_DIR: path.join(dir, "data"),
      ...env,
    },
    cwd: dir,
  };
}

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  scratch = await createScratchDatabase();
  dir = await mkdtemp(path.join(tmpdir(), "overseer-cli-forge-"));
  forge = await GitHubDouble.start();
  forge.addUser(FULL);
  forge.addUser(RESTRICTED);
  await forge.createRepository(REPO);
  await forge.protectBranch(REPO, ["main"]);
  await writeFile(
    path.join(dir, "runner.json"),
    JSON.stringify({ argv: ["/usr/bin/true"], secrets: { API_KEY: "sk-kept-1" } }),
  );
}, 120_000);

afterAll(async () => {
  await forge?.close();
  await scratch?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

afterEach(() => {
  expect(forge.takeViolations()).toEqual([]);
});

describe("inferRepository", () => {
  it.each([
    ["https://github.com/acme/app.git", "https://github.com", "acme/app"],
    ["https://github.com/acme/app", "https://github.com", "acme/app"],
    ["git@github.com:acme/app.git", "https://github.com", "acme/app"],
    ["ssh://git@github.com/acme/app.git", "https://github.com", "acme/app"],
    ["https://gitlab.example/gitlab/group/sub/app.git", "https://gitlab.example/gitlab", "group/sub/app"],
    ["http://127.0.0.1:3000/team/app.git", "http://127.0.0.1:3000", "team/app"],
  ])("%s on %s → %s", (repo, url, expected) => {
    expect(inferRepository(repo, url)).toBe(expected);
  });

  it.each([
    ["https://gitlab.com/acme/app.git", "https://github.com"],
    ["http://127.0.0.1:4000/team/app.git", "http://127.0.0.1:3000"],
    ["/srv/git/app.git", "https://github.com"],
    ["https://github.com/", "https://github.com"],
  ])("%s is not on %s", (repo, url) => {
    expect(inferRepository(repo, url)).toBeNull();
  });
});

describe("forgeFromFlags", () => {
  const flags = {
    forge: "github",
    forgeUrl: "https://github.com",
    forgeRepo: undefined,
    repo: "https://github.com/acme/app.git",
  };

  it("reads the forge's token variable; OVERSEER_FORGE_TOKEN wins", () => {
    expect(forgeFromFlags(flags, { GITHUB_TOKEN: "gh-1" })).toEqual({
      kind: "github",
      url: "https://github.com",
      repository: "acme/app",
      token: "gh-1",
    });
    expect(forgeFromFlags(flags, { GITHUB_TOKEN: "gh-1", OVERSEER_FORGE_TOKEN: "ov-2" })?.token).toBe("ov-2");
    expect(
      forgeFromFlags(
        { ...flags, forge: "gitlab", forgeUrl: "https://gitlab.example", forgeRepo: "g/s/p" },
        { GITLAB_TOKEN: "gl-3" },
      ),
    ).toMatchObject({ kind: "gitlab", repository: "g/s/p", token: "gl-3" });
    expect(forgeFromFlags({ ...flags, forge: undefined, forgeUrl: undefined }, {})).toBeNull();
  });

  it.each([
    [{ forge: "bitbucket" }, { GITHUB_TOKEN: "t" }, "--forge must be one of github, gitlab, gitea"],
    [{ forgeUrl: undefined }, { GITHUB_TOKEN: "t" }, "--forge github needs --forge-url"],
    [{ forgeUrl: "github.com" }, { GITHUB_TOKEN: "t" }, "--forge-url must be the forge's web URL"],
    [{ forgeUrl: "ftp://github.com" }, { GITHUB_TOKEN: "t" }, "must be an http(s) URL"],
    [{ forgeUrl: "https://me:pw@github.com" }, { GITHUB_TOKEN: "t" }, "must not hold credentials"],
    [{ repo: "/srv/git/app.git" }, { GITHUB_TOKEN: "t" }, "pass --forge-repo owner/name"],
    [{ forgeRepo: "a/b/c" }, { GITHUB_TOKEN: "t" }, "--forge-repo must be owner/name"],
    [{}, {}, "No github token: set GITHUB_TOKEN (or OVERSEER_FORGE_TOKEN, which wins)"],
    [
      { forge: "gitea", forgeUrl: "https://gitea.example", forgeRepo: "t/a" },
      { GITHUB_TOKEN: "t" },
      "set GITEA_TOKEN",
    ],
    [{ forge: undefined, forgeRepo: "a/b" }, {}, "--forge-url and --forge-repo need --forge"],
  ])("refuses %j with env %j: %s", (patch, env, words) => {
    expect(() => forgeFromFlags({ ...flags, ...patch }, env)).toThrow(words);
  });
});

describe("overseer init --forge", () => {
  it("sets landing.mode pull_request and forge, inferring the repository from --repo and the token from the environment", async () => {
    const out = io({ GITHUB_TOKEN: FULL.token });
    const code = await runCli(
      [
        "init",
        "--project",
        "pr-full",
        "--repo",
        forge.cloneUrl(REPO),
        "--config",
        "runner.json",
        "--forge",
        "github",
        "--forge-url",
        forge.url,
      ],
      out,
    );
    expect(code, out.stderr.join("\n")).toBe(0);
    const text = [...out.stdout, ...out.stderr].join("\n");
    expect(text).toContain(`approved work lands through pull requests on github ${forge.url} (${REPO})`);
    expect(text).not.toContain(FULL.token);
    const stored = parseRunnerConfig((await requireProject(scratch.db, "pr-full")).runner_config, "stored");
    expect(stored.landing.mode).toBe("pull_request");
    expect(stored.forge).toEqual({ kind: "github", url: forge.url, repository: REPO, token: FULL.token });
    expect(stored.argv).toEqual(["/usr/bin/true"]);
  });

  it("--update --forge alone keeps the stored config, secrets included, and adds the forge", async () => {
    expect(
      await runCli(
        ["init", "--project", "pr-update", "--repo", forge.cloneUrl(REPO), "--config", "runner.json"],
        io(),
      ),
    ).toBe(0);
    const out = io({ OVERSEER_FORGE_TOKEN: RESTRICTED.token, GITHUB_TOKEN: "ignored" });
    expect(
      await runCli(
        ["init", "--project", "pr-update", "--update", "--forge", "github", "--forge-url", forge.url],
        out,
      ),
    ).toBe(0);
    const stored = parseRunnerConfig((await requireProject(scratch.db, "pr-update")).runner_config, "stored");
    expect(stored.secrets).toEqual({ API_KEY: "sk-kept-1" });
    expect(stored.forge?.token).toBe(RESTRICTED.token);
    expect(stored.landing.mode).toBe("pull_request");
  });

  it("refuses a missing token and a bad URL with exit 2, registering nothing", async () => {
    const missing = io();
    const args = [
      "init",
      "--project",
      "pr-none",
      "--repo",
      forge.cloneUrl(REPO),
      "--forge",
      "github",
      "--forge-url",
      forge.url,
    ];
    expect(await runCli(args, missing)).toBe(2);
    expect(missing.stderr.join("\n")).toContain("set GITHUB_TOKEN (or OVERSEER_FORGE_TOKEN, which wins)");
    const badUrl = io({ GITHUB_TOKEN: FULL.token });
    expect(await runCli([...args.slice(0, -1), "not a url"], badUrl)).toBe(2);
    expect(badUrl.stderr.join("\n")).toContain("--forge-url must be the forge's web URL");
    expect(
      await scratch.db.selectFrom("projects").select("id").where("id", "=", "pr-none").executeTakeFirst(),
    ).toBeUndefined();
  });
});

describe("overseer doctor checks the forge token's rights", () => {
  it("passes with a fully privileged token and exits 0", async () => {
    const out = io();
    const code = await runCli(["doctor", "--json", "--project", "pr-full"], out);
    const report = JSON.parse(out.stdout.join("\n")) as {
      checks: { name: string; status: string; detail: string }[];
    };
    const check = report.checks.find((c) => c.name === "pr-full: forge github");
    expect(check).toMatchObject({ status: "ok" });
    expect(check?.detail).toContain(
      `token of ${FULL.login} has read, push, pull_requests, merge, checks_read`,
    );
    expect(code, JSON.stringify(report.checks.filter((c) => c.status === "fail"))).toBe(0);
  }, 120_000);

  it("names every missing right of a restricted token with what to grant, and exits 1", async () => {
    const out = io();
    const code = await runCli(["doctor", "--project", "pr-update"], out);
    const line = out.stdout.find((l) => l.includes("pr-update: forge github")) ?? "";
    expect(line).toMatch(/^FAIL/);
    expect(line).toContain(
      `token of ${RESTRICTED.login} on ${forge.url} (${REPO}) lacks push, pull_requests, checks_read, merge`,
    );
    expect(line).toContain("push: needed to push task branches; grant Contents: read and write.");
    expect(line).toContain(
      "pull_requests: needed to open and update pull requests; grant Pull requests: read and write.",
    );
    expect(line).toContain("checks_read: needed to read checks and statuses of a head; grant Checks: read");
    expect(line).toContain("merge: needed to merge approved, green pull requests");
    expect(line).not.toContain(RESTRICTED.token);
    expect(code).toBe(1);
  }, 120_000);

  it("fails on a refused token and on an unreachable forge, naming the URL and what to do", async () => {
    const port = await closedPort();
    const base = parseRunnerConfig(
      {
        landing: { mode: "pull_request" },
        forge: { kind: "github", url: forge.url, repository: REPO, token: "ghp_unknownTokenXYZ" },
      },
      "t",
    );
    const [refused] = await forgeRightsChecks("p", base, {}, 30_000);
    expect(refused).toMatchObject({ status: "fail", required: true });
    expect(refused?.detail).toContain("unauthorized (HTTP 401)");
    expect(refused?.fix).toContain("the forge refused the token");

    const down = parseRunnerConfig(
      { ...base, forge: { ...base.forge, url: `http://127.0.0.1:${port}` } },
      "t",
    );
    const [unreachable] = await forgeRightsChecks("p", down, {}, 30_000);
    expect(unreachable).toMatchObject({ status: "fail", required: true });
    expect(unreachable?.detail).toContain(`http://127.0.0.1:${port} (${REPO})`);
    expect(unreachable?.fix).toContain(
      `check that http://127.0.0.1:${port} is the forge's web URL and reachable from this host`,
    );

    // In push mode a forge is informational: its problems warn, never fail doctor.
    const pushMode = parseRunnerConfig({ ...down, landing: { mode: "push" } }, "t");
    expect((await forgeRightsChecks("p", pushMode, {}, 30_000))[0]).toMatchObject({
      status: "warn",
      required: false,
    });
  }, 120_000);

  it("through the gateway (token redacted) uses the environment's token, or says where to run it", async () => {
    const redacted = parseRunnerConfig(
      {
        landing: { mode: "pull_request" },
        forge: { kind: "github", url: forge.url, repository: REPO, token: REDACTED },
      },
      "t",
    );
    const [noToken] = await forgeRightsChecks("p", redacted, {}, 30_000);
    expect(noToken).toMatchObject({ status: "fail" });
    expect(noToken?.fix).toContain("run `overseer doctor` on the coordinator's host with DATABASE_URL set");
    const [withEnv] = await forgeRightsChecks("p", redacted, { GITHUB_TOKEN: FULL.token }, 30_000);
    expect(withEnv).toMatchObject({ status: "ok" });
  });

  it("names the missing rights of a GitLab and a Gitea token from their doubles, with each forge's grants", async () => {
    const gitlab = await GitLabDouble.start();
    const gitea = await GiteaDouble.start();
    try {
      gitlab.addUser({ username: "bot", token: "glpat-full", accessLevel: 40 });
      gitlab.addUser({
        username: "reporter",
        token: "glpat-reporter",
        accessLevel: 20,
        scopes: ["read_api"],
      });
      await gitlab.createProject("team/sub/app");
      gitea.addUser({ login: "bot", token: "gitea-full" });
      gitea.addUser({ login: "reader", token: "gitea-reader", permission: "read" });
      await gitea.createRepository("team/app");
      const config = (kind: "gitlab" | "gitea", url: string, repository: string, token: string) =>
        parseRunnerConfig(
          { landing: { mode: "pull_request" }, forge: { kind, url, repository, token } },
          "t",
        );

      const [gitlabFull] = await forgeRightsChecks(
        "p",
        config("gitlab", gitlab.url, "team/sub/app", "glpat-full"),
        {},
        30_000,
      );
      expect(gitlabFull).toMatchObject({ status: "ok", name: "p: forge gitlab" });
      const [reporter] = await forgeRightsChecks(
        "p",
        config("gitlab", gitlab.url, "team/sub/app", "glpat-reporter"),
        {},
        30_000,
      );
      expect(reporter).toMatchObject({ status: "fail", required: true });
      expect(reporter?.detail).toContain("token of reporter on");
      expect(reporter?.detail).toContain("lacks push, pull_requests, merge");
      expect(reporter?.fix).toContain(
        "push: needed to push task branches; grant scope write_repository and role Developer",
      );
      expect(reporter?.fix).toContain("GITLAB_TOKEN");

      const [giteaFull] = await forgeRightsChecks(
        "p",
        config("gitea", gitea.url, "team/app", "gitea-full"),
        {},
        30_000,
      );
      expect(giteaFull).toMatchObject({ status: "ok", name: "p: forge gitea" });
      const [reader] = await forgeRightsChecks(
        "p",
        config("gitea", gitea.url, "team/app", "gitea-reader"),
        {},
        30_000,
      );
      expect(reader).toMatchObject({ status: "fail" });
      expect(reader?.detail).toContain("lacks push, pull_requests, merge");
      expect(reader?.fix).toContain("grant token scope write:repository and Write access to this repository");
      expect(gitlab.takeViolations()).toEqual([]);
      expect(gitea.takeViolations()).toEqual([]);
    } finally {
      await gitlab.close();
      await gitea.close();
    }
  }, 120_000);
});

describe("a GitHub App instead of a token", () => {
  const APP = { id: 31337, slug: "overseer-app", installationId: 4711 };

  it("init --forge-app-id --forge-installation-id stores the App (key from GITHUB_APP_PRIVATE_KEY); doctor checks it", async () => {
    const key = forge.addApp(APP);
    const out = io({ GITHUB_APP_PRIVATE_KEY: key, GITHUB_TOKEN: "ignored-token" });
    const code = await runCli(
      [
        "init",
        "--project",
        "pr-app",
        "--repo",
        forge.cloneUrl(REPO),
        "--config",
        "runner.json",
        "--forge",
        "github",
        "--forge-url",
        forge.url,
        "--forge-app-id",
        String(APP.id),
        "--forge-installation-id",
        String(APP.installationId),
      ],
      out,
    );
    expect(code, out.stderr.join("\n")).toBe(0);
    expect([...out.stdout, ...out.stderr].join("\n")).not.toContain("PRIVATE KEY");
    const stored = parseRunnerConfig((await requireProject(scratch.db, "pr-app")).runner_config, "stored");
    expect(stored.forge).toEqual({
      kind: "github",
      url: forge.url,
      repository: REPO,
      app: { id: APP.id, installation_id: APP.installationId, private_key: key.trim() },
    });
    const report = io();
    expect(await runCli(["doctor", "--json", "--project", "pr-app"], report)).toBe(0);
    const checks = (JSON.parse(report.stdout.join("\n")) as { checks: { name: string; detail: string }[] })
      .checks;
    expect(checks.find((c) => c.name === "pr-app: forge github")?.detail).toContain(
      `GitHub App installation ${APP.installationId} of overseer-app[bot] has read, push, pull_requests, merge, checks_read`,
    );
  }, 120_000);

  it.each([
    [
      { forgeAppId: "1" },
      { GITHUB_APP_PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----" },
      "needs both --forge-app-id and --forge-installation-id",
    ],
    [{ forgeAppId: "x", forgeInstallationId: "2" }, {}, "--forge-app-id must be the App's id"],
    [{ forgeAppId: "1", forgeInstallationId: "2" }, {}, "No GitHub App key: set GITHUB_APP_PRIVATE_KEY"],
    [
      { forge: "gitlab", forgeRepo: "g/p", forgeAppId: "1", forgeInstallationId: "2" },
      {},
      "--forge gitlab takes a token (GITLAB_TOKEN)",
    ],
  ])("refuses %j with env %j: %s", (patch, env, words) => {
    const flags = {
      forge: "github",
      forgeUrl: "https://github.com",
      forgeRepo: undefined,
      repo: "https://github.com/acme/app.git",
    };
    expect(() => forgeFromFlags({ ...flags, ...patch }, env)).toThrow(words);
  });
});
