/**
 * Issue 23's Linear case with Overseer's real parts (Postgres, Redis/BullMQ, the coordinator and
 * its IntakeRunner, a worker running the fake harness in bwrap) and the Linear double (requests
 * and answers checked against @linear/sdk's GraphQL schema): a person assigns an issue to the
 * bot, it becomes a task whose run asks a "Needs you" question, and the person's comment on the
 * issue answers the card through the resolve command; after a coordinator restart that comment
 * is not read again. (Linear's webhooks, a stale `webhookTimestamp` refused among them, are
 * tested through the gateway's own route in services/gateway/test/intake-webhooks.test.ts.)
 */
import { getDecision, getIntakeItem, getTask } from "@overseer/db";
import { LinearDouble } from "@overseer/test-support";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useTestResources } from "../support/cluster-fixture.ts";
import { runsOf, takenItem, trackerCluster } from "../support/tracker-intake.ts";
import { waitFor } from "../support/wait-for.ts";

const resources = useTestResources();
let linear: LinearDouble;

beforeAll(async () => {
  linear = await LinearDouble.start();
  linear.workspace.addTeam("ENG", "Engineering");
});
afterAll(async () => {
  await linear?.close();
});
afterEach(() => {
  expect(linear.takeViolations()).toEqual([]);
});

const SOURCE = {
  id: "linear-eng",
  projectId: "linear",
  kind: "linear",
  query: { container: "ENG", assignee: "me" },
  tokenEnv: "OVERSEER_TEST_LINEAR_KEY",
} as const;

/** The fake agent asks on its first two execute runs, submits on the third; the review approves. */
const SCRIPT = [
  "```overseer-fake",
  'execute: write src/draft.txt "draft"; ask "Which database?" postgres:Postgres',
  'execute#2: ask "Which ORM?" kysely:Kysely',
  'execute#3: write src/db.txt "chosen"; submit "Use the chosen database"',
  "review: approve",
  "```",
].join("\n");

describe("Linear intake", () => {
  it("takes an issue assigned to the bot; a person's comment answers the task's card once, across a restart", async () => {
    const cluster = await trackerCluster(resources, {
      ...SOURCE,
      baseUrl: linear.url,
      token: linear.bot.apiKey,
    });
    const db = cluster.scratch.db;
    const issue = linear.fileIssue("ENG", {
      title: "Pick a database",
      description: `Store orders.\n\n${SCRIPT}`,
    });
    linear.assign(issue, linear.bot);

    const taskId = (await takenItem(cluster, SOURCE.id, issue.id)).task_id as string;
    expect(await getTask(db, "linear", taskId)).toMatchObject({ title: "Pick a database" });
    const pendingCard = (other?: string) =>
      waitFor("the task's pending card", async () => {
        const pending = (await getIntakeItem(db, SOURCE.id, issue.id))?.pending_decision_id;
        return pending && pending !== other ? pending : undefined;
      });
    const resolvedCard = (id: string) =>
      waitFor(`card ${id} resolved`, async () => {
        const decision = await getDecision(db, "linear", id);
        return decision?.status === "resolved" ? decision : undefined;
      });

    const first = await pendingCard();
    expect((await getDecision(db, "linear", first))?.question).toBe("Which database?");
    linear.comment(issue, "SQLite, it is a demo.");
    expect(await resolvedCard(first)).toMatchObject({
      selectedOption: "custom",
      note: expect.stringContaining("SQLite, it is a demo."),
      resolvedBy: `linear:${linear.human.displayName}`,
    });
    const cursor = (await getIntakeItem(db, SOURCE.id, issue.id))?.comment_cursor;
    expect(cursor).toEqual(expect.any(String));

    // The task goes on: its next run asks again. Restart the coordinator (and its runner) while
    // that card waits: the first comment is behind the stored cursor, so it answers nothing now.
    const second = await pendingCard(first);
    await cluster.coordinators[0]?.stop();
    await cluster.startCoordinator("coord-1", { intakePollMs: 1000 });
    linear.comment(issue, "Kysely.");
    const answered = await resolvedCard(second);
    expect(answered.note).toContain("Kysely.");
    expect(answered.note).not.toContain("SQLite");

    const state = await cluster.waitForProject(
      "linear",
      (s) => s.tasks.get(taskId)?.status === "done",
      20_000,
    );
    // Each card's answer reached its resolver once.
    const answers = [...state.tasks.values()].flatMap((t) => t.answers.map((a) => a.answer));
    expect(answers).toEqual([expect.stringContaining("SQLite"), expect.stringContaining("Kysely")]);
    expect((await runsOf(cluster, "linear", taskId)).map((r) => [r.action, r.status])).toEqual([
      ["execute", "finished"],
      ["execute", "finished"],
      ["execute", "finished"],
      ["review", "finished"],
    ]);
  }, 90_000);
});
