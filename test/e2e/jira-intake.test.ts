/**
 * Issue 23's Jira case with Overseer's real parts (Postgres, Redis/BullMQ, the coordinator and
 * its IntakeRunner, a worker running the fake harness in bwrap) and the Jira double (jira.js v3
 * models): a person moves the issue of a task to Done through Jira's transitions (jira.js, as the
 * board does), and intake cancels the task the way the cancel command does: its card is closed
 * with "stop", its resolver ends, and the run's work stays on its checkpoint branch. A source
 * whose token Jira refuses (401) says which environment variable to fix.
 */
import { getDecision, getIntakeItem, getIntakeSource } from "@overseer/db";
import { runGit } from "@overseer/git";
import { JiraDouble } from "@overseer/test-support";
import { Version3Client } from "jira.js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useTestResources } from "../support/cluster-fixture.ts";
import { addTrackerSource, takenItem, trackerCluster } from "../support/tracker-intake.ts";
import { waitFor } from "../support/wait-for.ts";

const resources = useTestResources();
let jira: JiraDouble;

beforeAll(async () => {
  jira = await JiraDouble.start();
});
afterAll(async () => {
  await jira?.close();
});
afterEach(() => {
  expect(jira.takeViolations()).toEqual([]);
});

const QUERY = { container: "PROJ", labels: ["overseer"], assignee: "me" };

/** The fake agent writes half the work, then asks a question the person never answers. */
const SCRIPT = [
  "```overseer-fake",
  'execute: write src/export.txt "half done"; ask "CSV or JSON?" csv:CSV json:JSON',
  "```",
].join("\n");

describe("Jira intake", () => {
  it("cancels the task of an issue a person moves to Done, its work kept on the checkpoint", async () => {
    const cluster = await trackerCluster(resources, {
      id: "jira-proj",
      projectId: "jira",
      kind: "jira",
      baseUrl: jira.url,
      query: QUERY,
      tokenEnv: "OVERSEER_TEST_JIRA_TOKEN",
      token: `${jira.bot.email}:${jira.bot.apiToken}`,
    });
    // A source of another project whose token Jira refuses (picked up at the runner's next sync).
    process.env.OVERSEER_TEST_JIRA_TOKEN_WRONG = `${jira.bot.email}:ATATTrevoked`;
    resources.onRelease(async () => {
      delete process.env.OVERSEER_TEST_JIRA_TOKEN_WRONG;
    });
    await addTrackerSource(cluster, {
      id: "jira-refused",
      projectId: "jira-refused",
      kind: "jira",
      baseUrl: jira.url,
      query: QUERY,
      tokenEnv: "OVERSEER_TEST_JIRA_TOKEN_WRONG",
    });

    const issue = jira.fileIssue("PROJ", {
      summary: "Export orders",
      description: `Export the orders.\n\n${SCRIPT}`,
      labels: ["overseer"],
      assignee: jira.bot,
    });
    const taskId = (await takenItem(cluster, "jira-proj", issue.id)).task_id as string;
    const card = await waitFor("the task's pending card", async () => {
      const pending = (await getIntakeItem(cluster.scratch.db, "jira-proj", issue.id))?.pending_decision_id;
      return pending ?? undefined;
    });

    // A person moves the issue to Done through the workflow's transitions, as the board does.
    const person = new Version3Client({
      host: jira.url,
      authentication: { basic: { email: jira.human.email, apiToken: jira.human.apiToken } },
    });
    const { transitions } = await person.issues.getTransitions({ issueIdOrKey: issue.key });
    const done = transitions?.find((t) => t.to?.name === "Done");
    if (!done?.id) throw new Error(`no transition to Done among ${JSON.stringify(transitions)}`);
    await person.issues.doTransition({ issueIdOrKey: issue.key, transition: { id: done.id } });

    const state = await cluster.waitForProject("jira", (s) => s.tasks.get(taskId)?.status === "cancelled");
    expect(state.tasks.get(taskId)?.statusReason).toMatch(/Done/);
    expect([...state.tasks.values()].map((t) => [t.id, t.status])).toEqual([
      [taskId, "cancelled"],
      [`${taskId}.R1`, "cancelled"],
    ]);
    expect(await getDecision(cluster.scratch.db, "jira", card)).toMatchObject({
      status: "resolved",
      selectedOption: "stop",
      resolvedBy: "intake:jira-proj",
    });
    await waitFor("the item marked cancelled", async () => {
      const item = await getIntakeItem(cluster.scratch.db, "jira-proj", issue.id);
      return item?.cancelled_at ?? undefined;
    });
    // Nothing rolled back: the run's work is on its checkpoint branch.
    const { repo } = await cluster.scratch.db
      .selectFrom("projects")
      .select("repo")
      .where("id", "=", "jira")
      .executeTakeFirstOrThrow();
    const refs = await runGit(
      ["for-each-ref", "--format=%(refname:short)", `refs/heads/overseer/checkpoint/${taskId}/`],
      { cwd: repo },
    );
    const checkpoint = refs.stdout.trim();
    expect(checkpoint).toMatch(new RegExp(`^overseer/checkpoint/${taskId}/execute-general-[0-9a-f]{12}$`));
    expect((await runGit(["show", `${checkpoint}:src/export.txt`], { cwd: repo })).stdout).toBe("half done");

    // The refused source: its poll error names the credentials' environment variable.
    const refused = await waitFor("the refused source's error", async () => {
      const source = await getIntakeSource(cluster.scratch.db, "jira-refused");
      return source?.last_error ?? undefined;
    });
    expect(refused).toMatch(/Jira refused the credentials \(401\)/);
    expect(refused).toMatch(/read from OVERSEER_TEST_JIRA_TOKEN_WRONG on this coordinator/);
  }, 40_000);
});
