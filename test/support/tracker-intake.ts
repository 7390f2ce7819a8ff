/**
 * What the tracker intake cases share (test/e2e/linear-intake.test.ts, jira-intake.test.ts): a
 * cluster with a real coordinator (its IntakeRunner polls every `pollMs`) and a real worker
 * running the fake harness, a project with one intake source on a tracker double, the tracker
 * token in the coordinator's environment (host-side, as in production), and reads of what
 * intake recorded for an issue.
 */
import { createIntakeSource, getIntakeItem, type IntakeItemRow } from "@overseer/db";
import type { TrackerKind } from "@overseer/intake";
import type { ClusterFixture, TestResources } from "./cluster-fixture.ts";
import { waitFor } from "./wait-for.ts";

export interface TrackerSourceSpec {
  readonly id: string;
  readonly projectId: string;
  readonly kind: TrackerKind;
  readonly baseUrl: string;
  readonly query: Record<string, unknown>;
  /** The environment variable the source names and the value set there for the test. */
  readonly tokenEnv: string;
  readonly token: string;
}

/** Sets `name` in this process's environment (the in-process coordinator reads it) until released. */
function setToken(resources: TestResources, name: string, value: string): void {
  const before = process.env[name];
  process.env[name] = value;
  resources.onRelease(async () => {
    if (before === undefined) delete process.env[name];
    else process.env[name] = before;
  });
}

/** A started project without tasks, subscribed to one tracker source. */
export async function addTrackerSource(
  cluster: ClusterFixture,
  source: Omit<TrackerSourceSpec, "token">,
): Promise<void> {
  await cluster.addProject({ id: source.projectId, tasks: [] });
  await createIntakeSource(cluster.scratch.db, {
    id: source.id,
    projectId: source.projectId,
    kind: source.kind,
    baseUrl: source.baseUrl,
    query: source.query,
    config: {},
    tokenEnv: source.tokenEnv,
    webhookSecretEnv: null,
    createdBy: "test",
  });
}

/**
 * A cluster (bwrap sandbox) with an empty started project subscribed to one tracker source, a
 * coordinator polling it every `pollMs` and one worker.
 */
export async function trackerCluster(
  resources: TestResources,
  source: TrackerSourceSpec,
  pollMs = 1000,
): Promise<ClusterFixture> {
  setToken(resources, source.tokenEnv, source.token);
  const cluster = await resources.cluster({ sandbox: "bwrap" });
  await addTrackerSource(cluster, source);
  await cluster.startCoordinator("coord-0", { intakePollMs: pollMs });
  await cluster.startWorker(1);
  return cluster;
}

/** What intake recorded for the issue, once it holds a task. */
export function takenItem(
  cluster: ClusterFixture,
  sourceId: string,
  issueId: string,
): Promise<IntakeItemRow> {
  return waitFor(`intake to take issue ${issueId}`, async () => {
    const item = await getIntakeItem(cluster.scratch.db, sourceId, issueId);
    return item?.task_id ? item : undefined;
  });
}

/** The project's runs of one task, oldest first. */
export function runsOf(cluster: ClusterFixture, projectId: string, taskId: string) {
  return cluster.scratch.db
    .selectFrom("runs")
    .select(["id", "action", "status", "agent_id"])
    .where("project_id", "=", projectId)
    .where("task_id", "=", taskId)
    .orderBy("created_at")
    .execute();
}
