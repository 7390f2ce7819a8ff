import { createProject, createScratchDatabase, requireProject, type ScratchDatabase } from "@overseer/db";
import { newTask, type ProjectState, type Run } from "@overseer/domain";
import { runJobSchema } from "@overseer/run-contract";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectPolicyOf } from "../src/project-policy.ts";
import { buildRunJob } from "../src/run-job-builder.ts";

const FORGE_TOKEN = "ghp_forgeTokenNeverInAJob0123456789abcd";
const HARNESS_SECRET = "sk-harness-secret-value-42";

let scratch: ScratchDatabase;

beforeAll(async () => {
  scratch = await createScratchDatabase();
});
afterAll(async () => {
  await scratch?.drop();
});

function stateWith(projectId: string, run: Run): ProjectState {
  const task = newTask({ projectId, id: "S01-T1", title: "Do it" });
  return {
    project: {
      id: projectId,
      status: "active",
      statusReason: null,
      continuous: false,
      concurrency: 1,
      sessionsLimit: null,
      sessionsUsed: 0,
      stage: null,
      mission: null,
      version: 1,
    },
    tasks: new Map([[task.id, task]]),
    runs: new Map([[run.id, run]]),
    decisions: new Map(),
  };
}

function runOf(projectId: string, action: Run["action"]): Run {
  return {
    id: `run-${action}`,
    projectId,
    taskId: "S01-T1",
    agentId: `${action}-general-0123456789ab`,
    action,
    attempt: 1,
    status: "queued",
    transition: null,
    failure: null,
    notBefore: null,
    createdAt: 1,
    workerId: null,
    startedAt: null,
  };
}

describe("buildRunJob", () => {
  it("never carries the forge token (nor any forge setting) into a RunJob, for every action", async () => {
    await createProject(scratch.db, {
      id: "job-forge",
      repo: "https://github.example/acme/app.git",
      runnerConfig: {
        argv: ["agent", "{prompt_file}"],
        secrets: { API_KEY: HARNESS_SECRET },
        files: { ".env": { from_secret: "API_KEY" } },
        landing: { mode: "pull_request", pull_request: { labels: ["overseer"] } },
        forge: { kind: "github", url: "https://github.example", repository: "acme/app", token: FORGE_TOKEN },
      },
    });
    const project = await requireProject(scratch.db, "job-forge");
    const policy = projectPolicyOf(project);
    expect(policy.forge?.token).toBe(FORGE_TOKEN);
    for (const action of ["execute", "review", "resolve"] as const) {
      const run = runOf(project.id, action);
      const built = buildRunJob(project, policy, stateWith(project.id, run), run, 1);
      if (!built.ok) throw new Error(built.message);
      // The job is what goes to Redis, the worker and (its env, files, argv) the sandbox.
      const wire = JSON.stringify(runJobSchema.parse(built.job));
      expect(wire).not.toContain(FORGE_TOKEN);
      expect(wire).not.toMatch(/"(forge|token)"\s*:/);
      expect(Object.values(built.job.env)).not.toContain(FORGE_TOKEN);
      expect(built.job.secretValues).not.toContain(FORGE_TOKEN);
      // The harness's own secrets still reach it (env, placed files, redaction list).
      expect(built.job.env.API_KEY).toBe(HARNESS_SECRET);
      expect(built.job.files[".env"]).toBe(HARNESS_SECRET);
      expect(built.job.secretValues).toEqual([HARNESS_SECRET]);
      expect(built.job.prompt).not.toContain(FORGE_TOKEN);
    }
  });

  it("never carries a forge token configured in push mode either", async () => {
    await createProject(scratch.db, {
      id: "job-forge-push",
      repo: "/tmp/none",
      runnerConfig: {
        argv: ["agent"],
        forge: { kind: "gitlab", url: "https://gitlab.example", repository: "g/s/app", token: FORGE_TOKEN },
      },
    });
    const project = await requireProject(scratch.db, "job-forge-push");
    const run = runOf(project.id, "execute");
    const built = buildRunJob(project, projectPolicyOf(project), stateWith(project.id, run), run, 1);
    if (!built.ok) throw new Error(built.message);
    expect(JSON.stringify(built.job)).not.toContain(FORGE_TOKEN);
  });
});
