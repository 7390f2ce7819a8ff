import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  createScratchDatabase,
  listEvents,
  loadProjectState,
  requireProject,
  type ScratchDatabase,
} from "@overseer/db";
import { initBareRepo } from "@overseer/git";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliGateway, type CliResult, runCapturedCli, startCliGateway } from "./cli-gateway.ts";

/**
 * A second terminal with only OVERSEER_URL and OVERSEER_TOKEN (issue 18 item 9): every verb
 * that reads or changes state goes through that gateway, to the cluster it serves. DATABASE_URL
 * points at a decoy database the whole time; it must stay empty.
 */

let env: CliGateway;
let cluster: ScratchDatabase;
let gateway: CliGateway["gateway"];
let tokens: CliGateway["tokens"];
let decoy: ScratchDatabase;
let dir: string;
let repo: string;

beforeAll(async () => {
  [env, decoy] = await Promise.all([
    startCliGateway("cligw", (scope) => `${scope}-terminal`),
    createScratchDatabase(),
  ]);
  ({ scratch: cluster, gateway, tokens } = env);
  dir = await mkdtemp(path.join(tmpdir(), "overseer-cli-gw-"));
  repo = path.join(dir, "app.git");
  await initBareRepo(repo, { initialFiles: { "README.md": "x\n" }, branch: "main" });
  await writeFile(
    path.join(dir, "tasks.yaml"),
    [
      "tasks:",
      "  - {id: S00-001, title: First, scope: ['src/**'], role: backend}",
      "  - {id: S00-002, title: Second, prerequisites: [S00-001]}",
    ].join("\n"),
  );
  await writeFile(path.join(dir, "bad.yaml"), "- {id: X-1, title: x, prerequisites: [NOPE-1]}\n");
});

afterAll(async () => {
  await Promise.all([env?.close(), decoy?.drop()]);
  await rm(dir, { recursive: true, force: true });
});

/** The CLI as the second terminal runs it: OVERSEER_URL, OVERSEER_TOKEN and a DATABASE_URL elsewhere. */
function terminal(args: string[], vars: NodeJS.ProcessEnv): Promise<CliResult> {
  return runCapturedCli(args, { DATABASE_URL: decoy.url, PATH: process.env.PATH, ...vars }, { cwd: dir });
}

const as = (scope: keyof typeof tokens) => ({ OVERSEER_URL: gateway.url, OVERSEER_TOKEN: tokens[scope] });

async function decoyIsEmpty(): Promise<void> {
  const tables = await decoy.db
    .selectFrom("projects")
    .select("id")
    .execute()
    .then((rows) => rows.length);
  expect(tables).toBe(0);
  expect(await listEvents(decoy.db, { after: null, limit: 10 })).toEqual([]);
}

describe("the CLI as a gateway client", () => {
  it("init, task import/add/list, start, pause, resume, stop and mission start change the gateway's cluster only", async () => {
    const init = await terminal(
      ["init", "--project", "second", "--repo", repo, "--objective", "Ship it", "--concurrency", "2"],
      as("admin"),
    );
    expect(init, init.err).toMatchObject({ code: 0 });
    expect(init.err).toContain(`via the gateway at ${gateway.url} (OVERSEER_URL)`);
    expect(init.out).toContain("created project second");
    const again = await terminal(["init", "--project", "second", "--repo", repo], as("admin"));
    expect(again.code).toBe(2);
    expect(again.err).toContain("pass --update");
    const update = await terminal(
      ["init", "--project", "second", "--update", "--objective", "Ship v2"],
      as("admin"),
    );
    expect(update, update.err).toMatchObject({ code: 0 });
    // init --update went through PATCH /api/v1/projects/{id}.
    expect(await requireProject(cluster.db, "second")).toMatchObject({
      objective: "Ship v2",
      concurrency: 2,
    });

    const imported = await terminal(["task", "import", "tasks.yaml", "--project", "second"], as("operate"));
    expect(imported, imported.err).toMatchObject({ code: 0, out: "imported 2 task(s) into second" });
    const bad = await terminal(["task", "import", "bad.yaml", "--project", "second"], as("operate"));
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("NOPE-1");
    expect(bad.err).toContain("Nothing was imported into second.");
    const added = await terminal(
      ["task", "add", "--id", "S00-003", "--title", "Third", "--after", "S00-002"],
      as("operate"),
    );
    expect(added, added.err).toMatchObject({ code: 0, out: "added S00-003 to second" });
    const listed = await terminal(["task", "list", "--json"], as("read"));
    expect(JSON.parse(listed.out).map((t: { id: string }) => t.id)).toEqual([
      "S00-001",
      "S00-002",
      "S00-003",
    ]);

    const started = await terminal(
      ["start", "--project", "second", "--max-sessions", "3", "--stage", "S00"],
      as("operate"),
    );
    expect(started, started.err).toMatchObject({
      code: 0,
      out: "started second (stage S00), max_sessions 3",
    });
    expect((await terminal(["pause", "second", "--reason", "lunch"], as("operate"))).out).toBe(
      "second paused; status paused (lunch)",
    );
    expect((await terminal(["resume", "--project", "second"], as("operate"))).out).toBe(
      "second resumed; status active",
    );
    const refused = await terminal(["stop", "second"], as("operate"));
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('scope "admin"');
    expect((await terminal(["stop", "second"], as("admin"))).out).toBe("second stopped; status stopped");

    const missionArgs = ["mission", "start", "--project", "second", "--objective", "Add a CSV export"];
    // Leaving `stopped` is the admin's (the authorization table), the CLI only relays it.
    const operateMission = await terminal([...missionArgs, "--max-rounds", "2"], as("operate"));
    expect(operateMission.code).toBe(1);
    expect(operateMission.err).toContain("while the project is stopped");
    const mission = await terminal([...missionArgs, "--max-rounds", "2"], as("admin"));
    expect(mission, mission.err).toMatchObject({ code: 0 });
    expect(mission.out).toContain("planning task MISSION-R1, at most 2 round(s)");

    const state = await loadProjectState(cluster.db, "second");
    expect(state.project.status).toBe("active");
    expect([...state.tasks.keys()].sort()).toEqual(["MISSION-R1", "S00-001", "S00-002", "S00-003"]);
    // Audited by the API: every change is an event with the token that made it.
    const events = await listEvents(cluster.db, { projectId: "second", after: null, limit: 100 });
    const by = (type: string) =>
      events.filter((e) => e.type === type).map((e) => (e.data as { by?: string }).by);
    expect(by("project.created")).toEqual(["api:admin-terminal"]);
    expect(by("project.started")).toEqual(["api:operate-terminal"]);
    await decoyIsEmpty();
  });

  it("start --follow prints the project's new events through the gateway until nothing is left to run", async () => {
    expect((await terminal(["init", "--project", "follow", "--repo", repo], as("admin"))).code).toBe(0);
    expect(
      (
        await terminal(
          ["task", "add", "--project", "follow", "--id", "S00-001", "--title", "One"],
          as("operate"),
        )
      ).code,
    ).toBe(0);
    const following = terminal(
      ["start", "--project", "follow", "--follow", "--max-sessions", "4"],
      as("operate"),
    );
    // Busy while a task waits to run: the command still follows once the project is active.
    await expect
      .poll(async () => (await loadProjectState(cluster.db, "follow")).project.status, { timeout: 10_000 })
      .toBe("active");
    const cancel = await fetch(`${gateway.url}/api/v1/projects/follow/tasks/S00-001/cancel`, {
      method: "POST",
      headers: { Authorization: `Bearer ${tokens.operate}`, "Content-Type": "application/json" },
      body: JSON.stringify({ reason: "not needed" }),
    });
    expect(cancel.status).toBe(200);
    const followed = await following;
    expect(followed, followed.err).toMatchObject({ code: 0 });
    const [startedLine, ...eventLines] = followed.out.split("\n");
    expect(startedLine).toBe("started follow, max_sessions 4");
    // Only what happened after the start command began: not the project's creation or its task.
    expect(eventLines.map((line) => line.split(" ").slice(1).join(" "))).toEqual([
      "follow - project.started",
      "follow S00-001 task.cancelled",
    ]);
    await decoyIsEmpty();
  });

  it("doctor reads projects and roles through the gateway, and --deep without DATABASE_URL is refused", async () => {
    const doctor = await terminal(["doctor", "--json", "--project", "second"], as("read"));
    expect(doctor.err).toContain(`via the gateway at ${gateway.url}`);
    const report = JSON.parse(doctor.out) as { checks: { name: string; status: string }[] };
    const names = report.checks.map((c) => c.name);
    expect(report.checks.find((c) => c.name === "gateway")?.status).toBe("ok");
    expect(names).not.toContain("postgres");
    expect(names).toContain("second: harness backend/execute");
    const deep = await terminal(["doctor", "--deep", "--project", "second"], {
      ...as("read"),
      DATABASE_URL: "",
    });
    expect(deep.code).toBe(2);
    expect(deep.err).toContain("never serves");
    await decoyIsEmpty();
  });

  it("a wrong token gets a clear 401, and a gateway without a token never falls back to DATABASE_URL", async () => {
    const wrong = { OVERSEER_URL: gateway.url, OVERSEER_TOKEN: "ovr_not-a-real-token" };
    for (const args of [
      ["status"],
      ["init", "--project", "third", "--repo", repo],
      ["start", "--project", "second"],
    ]) {
      const r = await terminal(args, wrong);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.err).toContain("HTTP 401");
      expect(r.err).toContain("The gateway refused OVERSEER_TOKEN");
    }
    const noToken = await terminal(["task", "import", "tasks.yaml"], { OVERSEER_URL: gateway.url });
    expect(noToken.code).toBe(2);
    expect(noToken.err).toContain("never falls back to DATABASE_URL");
    await decoyIsEmpty();
  });

  it("neutralises control characters in every server string it prints (status, pause reasons, errors)", async () => {
    const hostile = "\u001b[2J\u001b]0;owned\u0007\u009b31m\rover\u202e";
    await terminal(
      ["init", "--project", "hostile", "--repo", repo, "--objective", `Obj ${hostile}`],
      as("admin"),
    );
    await terminal(["start", "--project", "hostile"], as("operate"));
    const paused = await terminal(["pause", "hostile", "--reason", `why ${hostile}`], as("operate"));
    const status = await terminal(["status", "--project", "hostile"], as("read"));
    const every = await terminal(["status"], as("read"));
    const unknown = await terminal(["status", "--project", "nope"], as("read"));
    for (const printed of [paused, status, every, unknown]) {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for control characters
      expect(`${printed.out}${printed.err}`).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/);
    }
    expect(status.out).toContain("\\x1b[2J\\x1b]0;owned\\x07\\x9b31m\\x0dover\\u{202e}");
    // A hostile stage never gets in: the CLI and the API refuse it with the same words.
    const stage = await terminal(["start", "--project", "hostile", "--stage", "\u001b[2J"], as("operate"));
    expect(stage.code).toBe(2);
    expect(stage.err).toContain("a stage name such as S01");
  });
});
