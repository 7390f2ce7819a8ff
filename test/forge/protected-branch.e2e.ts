/**
 * Push mode against a forge that protects its main branch, end to end through a real
 * coordinator, worker, bwrap sandbox, Postgres and Redis: the worker pushes the task branch and
 * then the landing to a forge double over git smart HTTP, whose pre-receive hook refuses the
 * landing in that forge's words (GitHub GH006, GitLab's, Gitea's). No agent can fix that and no
 * retry changes it: the run ends as ONE configuration incident naming `landing.mode: pull_request`, the task waits for the
 * operator (awaiting_input, configuration_error), the project pauses, and main is untouched.
 */
import { listEvents } from "@overseer/db";
import { runGit } from "@overseer/git";
import { GiteaDouble, GitHubDouble, GitLabDouble } from "@overseer/test-support";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scriptedTask, useRunningCluster } from "../support/cluster-fixture.ts";

const REPO = "acme/app";

/** What the test needs of a double: its repository's clone URL, its contract violations, its end. */
interface ProtectedForge {
  cloneUrl(repository: string): string;
  takeViolations(): string[];
  close(): Promise<void>;
}

const FORGES: [string, () => Promise<ProtectedForge>, string][] = [
  [
    "GitHub",
    async () => {
      const double = await GitHubDouble.start();
      await double.createRepository(REPO, { "README.md": "# app\n" });
      await double.protectBranch(REPO, ["main"]);
      return double;
    },
    "GH006: Protected branch update failed for refs/heads/main.",
  ],
  [
    "GitLab",
    async () => {
      const double = await GitLabDouble.start();
      await double.createProject(REPO, { "README.md": "# app\n" });
      await double.protectBranch(REPO, ["main"]);
      return double;
    },
    "GitLab: You are not allowed to push code to protected branches on this project.",
  ],
  [
    "Gitea",
    async () => {
      const double = await GiteaDouble.start();
      await double.createRepository(REPO, { "README.md": "# app\n" });
      await double.protectBranch(REPO, ["main"]);
      return double;
    },
    "Gitea: Not allowed to push to protected branch main",
  ],
];

const doubles = new Map<string, ProtectedForge>();

beforeAll(async () => {
  for (const [name, start] of FORGES) doubles.set(name, await start());
}, 120_000);

afterAll(async () => {
  for (const double of doubles.values()) await double.close();
});

async function remoteHead(forge: ProtectedForge, branch: string): Promise<string | null> {
  const { stdout } = await runGit(["ls-remote", "--heads", forge.cloneUrl(REPO), `refs/heads/${branch}`], {
    cwd: process.cwd(),
    hostConfig: true,
  });
  return stdout.trim().split(/\s+/)[0] || null;
}

describe("push mode onto a protected branch (GitHub double over smart HTTP, bwrap worker)", () => {
  const cluster = useRunningCluster({ sandbox: "bwrap" }, 1);

  it.each(FORGES)(
    "%s: ends as one configuration incident naming landing.mode: pull_request; main is untouched",
    async (name, _start, words) => {
      const forge = doubles.get(name) as ProtectedForge;
      const id = `protected-${name.toLowerCase()}`;
      const mainBefore = await remoteHead(forge, "main");
      await cluster.addProject({
        id,
        tasks: [scriptedTask("S00-001", 'execute: write src/a.txt "a"; submit "Add a"\nreview: approve')],
        remote: () => forge.cloneUrl(REPO),
      });
      await cluster.waitForProject(id, (s) => s.project.status === "paused", 120_000);
      const db = cluster.scratch.db;
      const [incidents, task, runs, decisions] = await Promise.all([
        db.selectFrom("incidents").selectAll().where("project_id", "=", id).execute(),
        db.selectFrom("tasks").selectAll().where("project_id", "=", id).executeTakeFirstOrThrow(),
        db
          .selectFrom("runs")
          .select(["action", "status", "failure"])
          .where("project_id", "=", id)
          .orderBy("created_at")
          .execute(),
        db.selectFrom("decisions").selectAll().where("project_id", "=", id).execute(),
      ]);
      expect(incidents.map((i) => i.kind)).toEqual(["configuration_error"]);
      const message = incidents[0]?.message ?? "";
      expect(message).toContain("The remote refused to land S00-001 on main: the branch is protected");
      expect(message).toContain(words);
      expect(message).toContain("`landing.mode: pull_request`");
      expect(message).toContain(
        `overseer init --project ${id} --update --forge github|gitlab|gitea --forge-url URL`,
      );
      expect(task).toMatchObject({ status: "awaiting_input", awaiting_reason: "configuration_error" });
      // The executor's submit was pushed; the review's approve is the one run that failed, never retried.
      expect(runs.map((r) => [r.action, r.status])).toEqual([
        ["execute", "finished"],
        ["review", "failed"],
      ]);
      expect(decisions).toHaveLength(1);
      expect(decisions[0]?.question).toContain("landing.mode: pull_request");
      const events = (await listEvents(db, { projectId: id })).map((e) => e.type);
      expect(events).not.toContain("task.approved");
      expect(events).not.toContain("task.retry_scheduled");
      expect(events).toContain("task.awaiting_input");
      expect(await remoteHead(forge, "main")).toBe(mainBefore);
      expect(await remoteHead(forge, "overseer/task/S00-001")).toMatch(/^[0-9a-f]{40}$/);
      expect(forge.takeViolations()).toEqual([]);
    },
    180_000,
  );
});
