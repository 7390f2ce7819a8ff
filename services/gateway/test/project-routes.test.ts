// Project routes: create (runner config validated and redacted), list, get, pause/resume/stop.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { applyTransition, getProject } from "@overseer/db";
import { initBareRepo, runGit } from "@overseer/git";
import { describe, expect, it } from "vitest";
import { card, seedProject, useGatewayFixture } from "./support/gateway-fixture.ts";
import { stateSignature } from "./support/state-signature.ts";

const fx = useGatewayFixture();

describe("projects", () => {
  it("creates with a validated runner config, answers it redacted, lists and gets it", async () => {
    const created = await fx.request("POST", "/api/v1/projects", {
      token: fx.tokens.admin,
      body: {
        id: "alpha",
        repo: "/srv/git/alpha.git",
        objective: "Ship alpha",
        runner_config: {
          argv: ["fake-agent", "{prompt_file}"],
          secrets: { API_KEY: "super-secret-value-123" },
          max_sessions: 5,
        },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: "alpha",
      name: "alpha",
      repo: "/srv/git/alpha.git",
      status: "paused",
      branch: "main",
    });
    expect(created.body.runner_config.secrets).toEqual({ API_KEY: "[REDACTED]" });
    expect(created.body.runner_config.max_sessions).toBe(5);
    expect(created.text).not.toContain("super-secret-value-123");

    const got = await fx.request("GET", "/api/v1/projects/alpha", { token: fx.tokens.read });
    expect(got.status).toBe(200);
    expect(got.text).not.toContain("super-secret-value-123");
    expect(got.body.runner_config.argv).toEqual(["fake-agent", "{prompt_file}"]);

    const list = await fx.request("GET", "/api/v1/projects", { token: fx.tokens.read });
    expect(list.body.projects.map((p: { id: string }) => p.id)).toContain("alpha");
    expect(list.body.projects[0].runner_config).toBeUndefined();
    const paused = await fx.request("GET", "/api/v1/projects?status=paused", { token: fx.tokens.read });
    expect(paused.body.projects.map((p: { id: string }) => p.id)).toEqual(["alpha"]);

    const duplicate = await fx.request("POST", "/api/v1/projects", { body: { id: "alpha", repo: "/x" } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error.code).toBe("already_exists");
  });

  it("answers a pull_request config with forge.token redacted, and refuses pull_request mode without a forge", async () => {
    const token = "ghp_forgeTokenThroughTheGateway0123456789";
    const created = await fx.request("POST", "/api/v1/projects", {
      token: fx.tokens.admin,
      body: {
        id: "forge-redacted",
        repo: "/srv/git/forge.git",
        runner_config: {
          landing: { mode: "pull_request" },
          forge: { kind: "github", url: "https://github.com", repository: "acme/app", token },
        },
      },
    });
    expect(created.status).toBe(201);
    expect(created.body.runner_config.forge).toEqual({
      kind: "github",
      url: "https://github.com",
      repository: "acme/app",
      token: "[REDACTED]",
    });
    expect(created.body.runner_config.landing.mode).toBe("pull_request");
    expect(created.text).not.toContain(token);
    const got = await fx.request("GET", "/api/v1/projects/forge-redacted", { token: fx.tokens.read });
    expect(got.text).not.toContain(token);
    expect(JSON.stringify((await getProject(fx.scratch.db, "forge-redacted"))?.runner_config)).toContain(
      token,
    );

    const refused = await fx.request("POST", "/api/v1/projects", {
      token: fx.tokens.admin,
      body: {
        id: "forge-missing",
        repo: "/srv/git/x.git",
        runner_config: { landing: { mode: "pull_request" } },
      },
    });
    expect(refused.status).toBe(422);
    expect(refused.text).toContain("required when landing.mode is pull_request");
  });

  it("records a working copy, names overseer/<branch> and how to merge it in the project and its status", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "overseer-gw-wc-"));
    try {
      const bare = path.join(dir, "origin.git");
      await initBareRepo(bare, { initialFiles: { "a.txt": "a\n" }, branch: "main" });
      await runGit(["clone", "--quiet", "--", bare, path.join(dir, "copy")], { cwd: dir });
      const mine = await fx.request("POST", "/api/v1/projects", {
        token: fx.tokens.admin,
        body: { id: "mine", repo: path.join(dir, "copy") },
      });
      expect(mine.status).toBe(201);
      expect(mine.body).toMatchObject({
        branch: "main",
        repo_kind: "working_copy",
        landing_branch: "overseer/main",
        landing_hint:
          "approved work lands on overseer/main; bring it into your branch with `git merge overseer/main`",
      });
      const status = await fx.request("GET", "/api/projects/mine/status", { token: fx.tokens.read });
      expect(status.body).toMatchObject({ landing_branch: "overseer/main", repo_kind: "working_copy" });
      expect(status.body.text).toContain(
        "landing: approved work lands on overseer/main; bring it into your branch with `git merge overseer/main`",
      );
      // Registering reads the repository and writes nothing to it.
      expect((await runGit(["branch", "--list"], { cwd: path.join(dir, "copy") })).stdout.trim()).toBe(
        "* main",
      );

      const bareProject = await fx.request("POST", "/api/v1/projects", {
        token: fx.tokens.admin,
        body: { id: "shared", repo: bare },
      });
      expect(bareProject.body).toMatchObject({
        repo_kind: "bare",
        landing_branch: "main",
        landing_hint: null,
      });
      const url = await fx.request("POST", "/api/v1/projects", {
        token: fx.tokens.admin,
        body: { id: "hosted", repo: "https://git.example.invalid/x.git" },
      });
      expect(url.body).toMatchObject({ repo_kind: "remote", landing_branch: "main" });
      const status2 = await fx.request("GET", "/api/projects/shared/status", { token: fx.tokens.read });
      expect(status2.body.text).toContain("landing: approved work lands on main\n");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("refuses an invalid runner config with 422 listing every problem, without echoing secrets, creating nothing", async () => {
    const before = await stateSignature(fx);
    const res = await fx.request("POST", "/api/v1/projects", {
      body: {
        id: "beta",
        repo: "/x",
        runner_config: { argv: "not-an-array", timeout_second: 5, secrets: { TOKEN: 42 } },
      },
    });
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe("invalid_config");
    const paths = res.body.error.details.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(["argv", "timeout_second", "secrets.TOKEN"]));
    expect(await stateSignature(fx)).toEqual(before);
  });

  it("pause, resume (operate) and stop (admin) are recorded transitions", async () => {
    await seedProject(fx, "life", [card("S00-001")]);
    const paused = await fx.request("POST", "/api/v1/projects/life/pause", {
      token: fx.tokens.operate,
      body: { reason: "lunch" },
    });
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({
      project: { status: "paused", status_reason: "lunch" },
      application_status: "applied",
    });
    const resumed = await fx.request("POST", "/api/v1/projects/life/resume", { token: fx.tokens.operate });
    expect(resumed.body.project.status).toBe("active");
    const claimed = await applyTransition(fx.scratch.db, "life", { kind: "claim" });
    const runId = claimed.changes.runs[0]?.id;
    const forbidden = await fx.request("POST", "/api/v1/projects/life/stop", {
      token: fx.tokens.operate,
      body: {},
    });
    expect(forbidden.status).toBe(403);
    const stopped = await fx.request("POST", "/api/v1/projects/life/stop", {
      token: fx.tokens.admin,
      body: {},
    });
    expect(stopped.body.project.status).toBe("stopped");
    expect((await getProject(fx.scratch.db, "life"))?.status).toBe("stopped");
    const run = await fx.request("GET", `/api/v1/runs/${runId}`);
    expect(run.body.status).toBe("cancelled");
    const events = await fx.request("GET", "/api/v1/projects/life/events?type=project.status_changed");
    expect(events.body.events.map((e: { data: { status: string } }) => e.data.status)).toEqual([
      "paused",
      "active",
      "stopped",
    ]);
  });
});
