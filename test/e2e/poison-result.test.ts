/**
 * Poison results (issue 9, breach 2), through the real worker, bwrap, Redis and Postgres:
 * - an agent whose transition holds a NUL character and a lone surrogate (written as JSON
 *   escapes straight into its control file) gets its work reviewed and landed, with the
 *   text normalised, instead of failing its result 25 times and wedging the project;
 * - a result Postgres keeps refusing (a trigger on `runs`, armed while a flag row exists)
 *   ends its run as failed with a `result_unapplicable` incident after the configured
 *   attempts, and the project's other tasks carry on.
 */
import { listEvents, sql } from "@overseer/db";
import { describe, expect, it } from "vitest";
import { ClusterFixture, useTestResources } from "../support/cluster-fixture.ts";

/** Reviewers approve; S00-001 writes a poisoned control file; S00-002 prints the refused marker. */
const AGENT = `set -e
if [ "$OVERSEER_ACTION" = review ]; then exec overseer-agent approve --feedback ok; fi
mkdir -p src && echo "$OVERSEER_TASK_ID" > "src/$OVERSEER_TASK_ID.txt"
case "$OVERSEER_TASK_ID" in
  S00-001)
    cat > "$OVERSEER_CONTROL_DIR/transition.json" <<'JSON'
{"version":1,"kind":"submit","message":"Poison\\u0000 message \\udc00","summary":"a\\u0000b\\ud800c"}
JSON
    printf 'nul byte:\\000 end\\n'
    printf 'bad utf8:\\377\\376\\355\\240\\200 end\\n' ;;
  S00-002) echo POISON-MARKER; echo "Add $OVERSEER_TASK_ID" | overseer-agent submit --message-file - ;;
  *) echo "Add $OVERSEER_TASK_ID" | overseer-agent submit --message-file - ;;
esac
`;

const task = (id: string) => ({ id, title: `Task ${id}`, scope: ["src/**"] });

const resources = useTestResources();

describe("poison results", () => {
  it("NUL and lone surrogates in a transition are normalised; a result Postgres refuses ends its run with an incident", {
    timeout: 240_000,
  }, async () => {
    const cluster = await resources.cluster();
    const { db } = cluster.scratch;
    await sql
      .raw(`
      CREATE TABLE poison_flag (armed boolean);
      INSERT INTO poison_flag VALUES (true);
      CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.output LIKE '%POISON-MARKER%' AND EXISTS (SELECT 1 FROM poison_flag) THEN
          RAISE EXCEPTION 'test trigger refuses this run output';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER refuse_poison BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION refuse_poison();`)
      .execute(db);
    await cluster.startCoordinator();
    await cluster.startWorker(2);
    await cluster.addProject({
      id: "poison",
      tasks: [task("S00-001"), task("S00-002"), task("S00-003")],
      concurrency: 2,
      runnerConfig: ClusterFixture.fakeRunnerConfig({ argv: ["/bin/sh", "-c", AGENT], attempts: 3 }),
    });

    // The refused result ends its run as failed with an incident; the other tasks carry on.
    const unapplicable = async () =>
      db
        .selectFrom("incidents")
        .selectAll()
        .where("project_id", "=", "poison")
        .where("kind", "=", "result_unapplicable")
        .orderBy("id")
        .execute();
    await cluster.waitForProject(
      "poison",
      (s) => s.tasks.get("S00-001")?.status === "done" && s.tasks.get("S00-003")?.status === "done",
      180_000,
    );
    for (const deadline = Date.now() + 120_000; (await unapplicable()).length === 0; ) {
      if (Date.now() > deadline) throw new Error("no result_unapplicable incident was recorded");
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const [incident] = await unapplicable();
    expect(incident?.task_id).toBe("S00-002");
    expect(incident?.message).toContain("could not be applied after 5 attempts");
    expect(incident?.message).toContain("test trigger refuses this run output");
    const failedRun = await db
      .selectFrom("runs")
      .select(["status", "failure"])
      .where("id", "=", incident?.run_id ?? "")
      .executeTakeFirstOrThrow();
    expect(failedRun.status).toBe("failed");

    // Once Postgres accepts it again, the retried task completes too.
    await sql`DELETE FROM poison_flag`.execute(db);
    await cluster.waitForProject("poison", (s) => s.tasks.get("S00-002")?.status === "done", 120_000);

    // The poisoned text was normalised at the boundary, not dropped.
    const events = await listEvents(db, { projectId: "poison", limit: 1000 });
    const submitted = events.find(
      (e) => e.task_id === "S00-001" && JSON.stringify(e.data).includes("a\uFFFDb"),
    );
    expect(submitted?.data).toMatchObject({ summary: "a\uFFFDb\uFFFDc" });
    const run = await db
      .selectFrom("runs")
      .select(["output"])
      .where("task_id", "=", "S00-001")
      .where("action", "=", "execute")
      .executeTakeFirstOrThrow();
    expect(run.output).toContain("nul byte:\uFFFD end");
    // Invalid UTF-8 (stray bytes, an encoded lone surrogate) reaches Postgres as U+FFFD.
    expect(run.output).toMatch(/bad utf8:\uFFFD+ end/);
    // Every run ended: none was left running by a result that could not be applied.
    const running = await db
      .selectFrom("runs")
      .select("id")
      .where("status", "in", ["queued", "running"])
      .execute();
    expect(running).toEqual([]);
  });
});
