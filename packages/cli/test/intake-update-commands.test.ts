import {
  createIntakeSource,
  createProject,
  recordTrackerUpdateOutcome,
  startTrackerUpdateAttempt,
} from "@overseer/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CliGateway, type CliResult, runCapturedCli, startCliGateway } from "./cli-gateway.ts";

/**
 * `overseer intake updates|redeliver` against a real listening gateway over a scratch database:
 * a tracker update that went dead is listed as a dead letter and sent again once.
 */

let env: CliGateway;
let deadId = "";

beforeAll(async () => {
  env = await startCliGateway("cliupdates");
  await createProject(env.scratch.db, { id: "heard", repo: "/tmp/none", runnerConfig: {}, objective: "o" });
  await createIntakeSource(env.scratch.db, {
    id: "src_heard",
    projectId: "heard",
    kind: "linear",
    baseUrl: null,
    query: { container: "ENG" },
    config: {},
    tokenEnv: "OVERSEER_TEST_CLI_UPDATES_TOKEN",
    webhookSecretEnv: null,
    createdBy: "test",
  });
  const row = await env.scratch.db
    .insertInto("tracker_updates")
    .values({
      key: "src_heard:issue-1:started:first",
      source_id: "src_heard",
      issue_id: "issue-1",
      project_id: "heard",
      task_id: "eng-1",
      moment: "started",
      occurrence: "first",
      event_id: null,
      data: JSON.stringify({}),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  deadId = String(row.id);
  await startTrackerUpdateAttempt(env.scratch.db, deadId);
  await recordTrackerUpdateOutcome(env.scratch.db, deadId, {
    status: "dead",
    error: "Linear 401: bad token",
  });
}, 60_000);

afterAll(async () => {
  await env?.close();
});

function cli(args: string[], scope: keyof CliGateway["tokens"] = "operate"): Promise<CliResult> {
  return runCapturedCli(args, { OVERSEER_URL: env.gateway.url, OVERSEER_TOKEN: env.tokens[scope] });
}

describe("overseer intake updates", () => {
  it("lists a dead tracker update and sends it again once", async () => {
    const listed = await cli(["intake", "updates", "--project", "heard", "--status", "dead"], "read");
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toMatch(
      new RegExp(
        `${deadId}\\s+dead letter\\s+1\\s+started\\s+linear issue-1\\s+eng-1\\s+heard\\s+Linear 401: bad token`,
      ),
    );
    const refused = await cli(["intake", "redeliver", deadId], "read");
    expect(refused.code).not.toBe(0);
    const first = await cli(["intake", "redeliver", deadId]);
    expect(first.code, first.err).toBe(0);
    expect(first.out).toContain(
      `tracker update ${deadId} (started on linear issue issue-1) is pending again`,
    );
    const second = await cli(["intake", "redeliver", deadId]);
    expect(second.out).toContain(`tracker update ${deadId} is pending, not a dead letter; nothing changed`);
    const none = await cli(["intake", "updates", "--project", "heard", "--status", "dead"], "read");
    expect(none.out.trim()).toBe("no tracker update");
    const json = await cli(["intake", "updates", "--source", "src_heard", "--json"], "read");
    expect(JSON.parse(json.out)).toEqual([
      expect.objectContaining({ id: deadId, status: "pending", attempts: 0 }),
    ]);
  });

  it("refuses an id that is not an integer before asking the gateway", async () => {
    const bad = await cli(["intake", "redeliver", "abc"]);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('A tracker update id is an integer, received "abc"');
  });
});
