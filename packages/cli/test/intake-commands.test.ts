import { createProject } from "@overseer/db";
import { GitHubDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliGateway, type CliResult, runCapturedCli, startCliGateway } from "./cli-gateway.ts";

/**
 * `overseer intake add|list|remove|test` against a real listening gateway over a scratch
 * database, reading the GitHub double (requests checked against @octokit/openapi).
 */

const TOKEN_ENV = "OVERSEER_TEST_CLI_INTAKE_TOKEN";
const BOT = { login: "overseer-bot", token: "ghp_cli_intake_bot" };
let env: CliGateway;
let github: GitHubDouble;

beforeAll(async () => {
  process.env[TOKEN_ENV] = BOT.token;
  env = await startCliGateway("cliintake");
  github = await GitHubDouble.start();
  github.addUser(BOT);
  await github.createRepository("acme/app");
  await createProject(env.scratch.db, { id: "took", repo: "/tmp/none", runnerConfig: {}, objective: "o" });
}, 60_000);

afterAll(async () => {
  delete process.env[TOKEN_ENV];
  await github?.close();
  await env?.close();
});

function cli(args: string[], scope: keyof CliGateway["tokens"] = "admin"): Promise<CliResult> {
  return runCapturedCli(args, { OVERSEER_URL: env.gateway.url, OVERSEER_TOKEN: env.tokens[scope] });
}

describe("overseer intake", () => {
  it("adds a source, dry-runs it, lists it and removes it", async () => {
    const number = github.openIssue("acme/app", {
      title: "Add a health route",
      labels: ["overseer"],
      assignees: [BOT.login],
    });
    const added = await cli([
      "intake",
      "add",
      "github",
      "acme/app",
      "--project",
      "took",
      "--label",
      "overseer",
      "--assignee",
      BOT.login,
      "--token-env",
      TOKEN_ENV,
      "--base-url",
      github.url,
    ]);
    expect(added.code, added.err).toBe(0);
    const id = /added (src_[0-9a-f]+)/.exec(added.out)?.[1];
    if (!id) throw new Error(`no id in: ${added.out}`);
    const tested = await cli(["intake", "test", id, "--project", "took"], "operate");
    expect(tested.code, tested.err).toBe(0);
    expect(tested.out).toContain(`acme/app#${number} → task acme-app-${number}: Add a health route`);
    const listed = await cli(["intake", "list", "--project", "took"], "read");
    expect(listed.out).toMatch(new RegExp(`${id}\\s+github\\s+acme/app\\s+0\\s+never`));
    expect((await cli(["intake", "remove", id, "--project", "took"])).code).toBe(0);
    expect((await cli(["intake", "list", "--project", "took"], "read")).out).toContain(
      "no intake source in took",
    );
    expect(github.takeViolations()).toEqual([]);
  });

  it("says what to do on a missing token variable and on a bad field", async () => {
    const missing = await cli(["intake", "add", "github", "acme/app", "--project", "took"]);
    expect(missing.code).not.toBe(0);
    expect(missing.err).toContain("--token-env NAME");
    const bad = await cli(["intake", "add", "asana", "x", "--project", "took", "--token-env", TOKEN_ENV]);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain("kind");
  });
});
