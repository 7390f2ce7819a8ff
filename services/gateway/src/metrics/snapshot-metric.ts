/** A Prometheus metric read from the gateway's latest cluster snapshot (gateway-metrics.ts). */

export type Sample = { value: number; labels: Record<string, string>; metricName?: string };

/** A metric whose samples are computed from the latest cluster snapshot at scrape time. */
export class SnapshotMetric {
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: "gauge" | "counter" | "histogram",
    private readonly samples: () => Sample[],
  ) {}

  async get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: "sum", values: this.samples() };
  }
}
