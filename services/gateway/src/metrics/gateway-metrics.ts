import {
  countEventsByType,
  countPendingDecisions,
  countPullRequests,
  countRunOutcomes,
  type DurationBuckets,
  deliveryFigures,
  intakeFigures,
  leaseOwners,
  pullRequestApiCallBuckets,
  runDurationBuckets,
  trackerUpdateFigures,
} from "@overseer/db";
import { type QueueCounts, runQueueName } from "@overseer/queue";
import { Counter, collectDefaultMetrics, Gauge, Histogram, type Metric, Registry } from "prom-client";
import type { GatewayDeps } from "../gateway-options.ts";
import { withTimeout } from "../http/with-timeout.ts";
import { SharedRefresh } from "../live/shared-refresh.ts";
import { poolQueueCounts } from "../operations/pool-queue-counts.ts";
import { FORGE_CALLS_PER_TASK_BUCKETS, type ForgeSnapshot, forgeMetrics } from "./forge-metrics.ts";
import {
  type DeliveryFigures,
  INTAKE_METRICS,
  type IntakeFigures,
  NOTIFICATION_METRICS,
  TRACKER_UPDATE_METRICS,
} from "./notification-metrics.ts";
import { SnapshotMetric } from "./snapshot-metric.ts";

/**
 * Prometheus metrics. Two kinds:
 *
 * - Process-local instruments updated as requests happen: HTTP latency by route and status,
 *   operator transitions applied by this gateway, open SSE streams, tracker webhook deliveries
 *   this gateway refused.
 * - Cluster figures read at scrape time from their source of truth (Postgres for run outcomes,
 *   durations, transitions, pending cards, leases and pull requests; Redis for queue depths), so every
 *   gateway replica reports the same numbers and nothing is lost on restart. They are read
 *   together once per `cacheMs` and exposed through snapshot-backed metric objects.
 *
 * A source that cannot be read is reported by `overseer_metrics_source_up{source} 0` and
 * its figures are left out of that scrape, instead of failing the whole scrape.
 */

/** Upper bounds of the run duration histogram, in seconds. */
export const RUN_DURATION_BUCKETS_SECONDS: readonly number[] = [
  1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200,
];
/** Upper bounds of the HTTP latency histogram, in seconds. */
export const HTTP_DURATION_BUCKETS_SECONDS: readonly number[] = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

interface ClusterSnapshot {
  queues: QueueCounts | null;
  outcomes: { outcome: string; transition: string; count: number }[] | null;
  eventsByType: Record<string, number> | null;
  durations: DurationBuckets | null;
  pending: Record<string, number> | null;
  leases: { projectId: string; owner: string }[] | null;
  pullRequests: ForgeSnapshot["pullRequests"];
  forgeCallsPerTask: ForgeSnapshot["forgeCallsPerTask"];
  deliveries: DeliveryFigures | null;
  trackerUpdates: DeliveryFigures | null;
  intake: IntakeFigures | null;
}

const EMPTY_SNAPSHOT: ClusterSnapshot = {
  queues: null,
  outcomes: null,
  eventsByType: null,
  durations: null,
  pending: null,
  leases: null,
  pullRequests: null,
  forgeCallsPerTask: null,
  deliveries: null,
  trackerUpdates: null,
  intake: null,
};

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<"method" | "route" | "status">;
  readonly operatorTransitions: Counter<"kind" | "outcome">;
  readonly openStreams: Gauge<"kind">;
  readonly intakeWebhooksRefused: Counter<"reason">;
  private snapshot: ClusterSnapshot = EMPTY_SNAPSHOT;
  /** The cluster figures, read at most once per `cacheMs` whatever the number of scrapers. */
  private readonly snapshots: SharedRefresh<ClusterSnapshot>;

  constructor(
    private readonly deps: Pick<GatewayDeps, "db" | "queues" | "registry" | "logger">,
    cacheMs: number,
    /** Time limit of each source read. */
    private readonly sourceTimeoutMs: number,
    processMetrics: boolean,
    /** Heartbeat age after which a worker is gone (its pools are counted while it lives). */
    private readonly staleAfterMs: number,
  ) {
    this.snapshots = new SharedRefresh(() => this.refresh(), { ttlMs: cacheMs });
    const registers = [this.registry];
    if (processMetrics) collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: "overseer_http_request_duration_seconds",
      help: "Gateway HTTP request latency by route pattern and status.",
      labelNames: ["method", "route", "status"],
      buckets: [...HTTP_DURATION_BUCKETS_SECONDS],
      registers,
    });
    this.operatorTransitions = new Counter({
      name: "overseer_gateway_operator_transitions_total",
      help: "Operator transitions applied through this gateway, by command kind and outcome.",
      labelNames: ["kind", "outcome"],
      registers,
    });
    this.openStreams = new Gauge({
      name: "overseer_gateway_open_streams",
      help: "Server-sent event streams open on this gateway.",
      labelNames: ["kind"],
      registers,
    });
    this.intakeWebhooksRefused = new Counter({
      name: "overseer_intake_webhooks_refused_total",
      help: "Tracker webhook deliveries this gateway refused and stored nowhere, by reason (bad_signature, webhooks_not_configured, not_found).",
      labelNames: ["reason"],
      registers,
    });
    const s = () => this.snapshot;
    const add = (metric: SnapshotMetric) => this.registry.registerMetric(metric as unknown as Metric);
    add(
      new SnapshotMetric(
        "overseer_metrics_source_up",
        "1 when the source could be read for this scrape.",
        "gauge",
        () => [
          { labels: { source: "postgres" }, value: s().pending === null ? 0 : 1 },
          { labels: { source: "redis" }, value: s().queues === null ? 0 : 1 },
        ],
      ),
    );
    add(
      new SnapshotMetric(
        "overseer_queue_jobs",
        "Jobs in the BullMQ queues by queue and state: one run queue per worker pool (`runs` for the default pool, `runs-<pool>` for another), and the results.",
        "gauge",
        () => {
          const q = s().queues;
          if (q === null) return [];
          const queues: [string, Record<string, number>][] = [
            ...Object.entries(q.pools).map(
              ([pool, counts]) => [runQueueName(pool), counts] as [string, Record<string, number>],
            ),
            ["results", q.results],
          ];
          return queues.flatMap(([queue, counts]) =>
            Object.entries(counts).map(([state, value]) => ({ labels: { queue, state }, value })),
          );
        },
      ),
    );
    add(
      new SnapshotMetric(
        "overseer_run_outcomes_total",
        "Ended runs by outcome (finished, failed, cancelled) and transition, from the events table.",
        "counter",
        () =>
          (s().outcomes ?? []).map((o) => ({
            labels: { outcome: o.outcome, transition: o.transition },
            value: o.count,
          })),
      ),
    );
    add(
      new SnapshotMetric(
        "overseer_transition_events_total",
        "Events appended by transitions, by event type, from the events table.",
        "counter",
        () => Object.entries(s().eventsByType ?? {}).map(([type, value]) => ({ labels: { type }, value })),
      ),
    );
    add(
      new SnapshotMetric(
        "overseer_run_duration_seconds",
        "Recorded durations of ended runs.",
        "histogram",
        () => {
          const d = s().durations;
          if (!d) return [];
          const name = "overseer_run_duration_seconds";
          return [
            ...RUN_DURATION_BUCKETS_SECONDS.map((le, i) => ({
              metricName: `${name}_bucket`,
              labels: { le: String(le) },
              value: d.cumulative[i] ?? 0,
            })),
            { metricName: `${name}_bucket`, labels: { le: "+Inf" }, value: d.count },
            { metricName: `${name}_sum`, labels: {}, value: d.sumSeconds },
            { metricName: `${name}_count`, labels: {}, value: d.count },
          ];
        },
      ),
    );
    add(
      new SnapshotMetric(
        "overseer_pending_decisions",
        'Pending "Needs you" decision cards by project.',
        "gauge",
        () => Object.entries(s().pending ?? {}).map(([project, value]) => ({ labels: { project }, value })),
      ),
    );
    add(
      new SnapshotMetric(
        "overseer_project_lease",
        "1 per project whose lease a coordinator holds, labelled by owner.",
        "gauge",
        () => (s().leases ?? []).map((l) => ({ labels: { project: l.projectId, owner: l.owner }, value: 1 })),
      ),
    );
    for (const metric of forgeMetrics(s)) add(metric);
    for (const m of NOTIFICATION_METRICS)
      add(new SnapshotMetric(m.name, m.help, m.type, () => m.samples(s().deliveries ?? [])));
    for (const m of TRACKER_UPDATE_METRICS)
      add(new SnapshotMetric(m.name, m.help, m.type, () => m.samples(s().trackerUpdates ?? [])));
    for (const m of INTAKE_METRICS)
      add(new SnapshotMetric(m.name, m.help, m.type, () => m.samples(s().intake ?? [])));
    add(
      new SnapshotMetric(
        "overseer_lease_owners",
        "Coordinators currently holding at least one project lease.",
        "gauge",
        () =>
          s().leases === null
            ? []
            : [{ labels: {}, value: new Set((s().leases ?? []).map((l) => l.owner)).size }],
      ),
    );
  }

  /** The exposition text, with cluster figures at most `cacheMs` old. */
  async render(): Promise<{ contentType: string; body: string }> {
    this.snapshot = await this.snapshots.get();
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Reads every source; one that fails is logged and left null (never throws). */
  private async refresh(): Promise<ClusterSnapshot> {
    const { db, logger } = this.deps;
    const [queueCounts, postgres] = await Promise.allSettled([
      poolQueueCounts(this.deps, this.staleAfterMs, this.sourceTimeoutMs),
      withTimeout(
        Promise.all([
          countRunOutcomes(db),
          countEventsByType(db),
          runDurationBuckets(db, RUN_DURATION_BUCKETS_SECONDS),
          countPendingDecisions(db),
          leaseOwners(db),
          countPullRequests(db),
          pullRequestApiCallBuckets(db, FORGE_CALLS_PER_TASK_BUCKETS),
          deliveryFigures(db),
          trackerUpdateFigures(db),
          intakeFigures(db),
        ]),
        this.sourceTimeoutMs,
        "Postgres",
      ),
    ]);
    const next: ClusterSnapshot = {
      ...EMPTY_SNAPSHOT,
      queues: queueCounts.status === "fulfilled" ? queueCounts.value : null,
    };
    if (postgres.status === "fulfilled") {
      const [
        outcomes,
        eventsByType,
        durations,
        pending,
        leases,
        pullRequests,
        forgeCallsPerTask,
        deliveries,
        trackerUpdates,
        intake,
      ] = postgres.value;
      Object.assign(next, {
        outcomes,
        eventsByType,
        durations,
        pending,
        leases,
        pullRequests,
        forgeCallsPerTask,
        deliveries,
        trackerUpdates,
        intake,
      });
    } else {
      logger.warn({ err: postgres.reason }, "metrics: cannot read Postgres figures");
    }
    if (queueCounts.status === "rejected")
      logger.warn({ err: queueCounts.reason }, "metrics: cannot read queue counts");
    return next;
  }
}
