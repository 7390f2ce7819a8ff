import {
  createProject,
  createScratchDatabase,
  json,
  requireProject,
  type ScratchDatabase,
} from "@overseer/db";
import { ConfigError } from "@overseer/input-errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { retryPolicyOf } from "../src/run-job-builder.ts";

let scratch: ScratchDatabase;

beforeAll(async () => {
  scratch = await createScratchDatabase();
});
afterAll(async () => {
  await scratch?.drop();
});

describe("retryPolicyOf", () => {
  it("reads attempts and backoff from the stored runner config", async () => {
    await createProject(scratch.db, {
      id: "retry-ok",
      repo: "/tmp/none",
      runnerConfig: { attempts: 5, retry_backoff_seconds: 2 },
    });
    expect(retryPolicyOf(await requireProject(scratch.db, "retry-ok"))).toEqual({
      maxAttempts: 5,
      backoffMs: 2000,
    });
  });

  it("refuses an invalid stored config with the fields and the command that replaces it, never a default", async () => {
    await createProject(scratch.db, { id: "retry-bad", repo: "/tmp/none", runnerConfig: {} });
    // A row written before a schema change, or edited by hand: the repository stores what it is given.
    await scratch.db
      .updateTable("projects")
      .set({ runner_config: json({ attempts: "many" }) })
      .where("id", "=", "retry-bad")
      .execute();
    const project = await requireProject(scratch.db, "retry-bad");
    let thrown: unknown;
    try {
      retryPolicyOf(project);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    const message = (thrown as ConfigError).message;
    expect(message).toContain("runner config of project retry-bad");
    expect(message).toContain("attempts");
    expect(message).toContain("overseer init --project retry-bad --update --config runner.json");
  });
});
