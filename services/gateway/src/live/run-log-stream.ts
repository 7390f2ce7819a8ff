import { type Db, getRun } from "@overseer/db";
import type { LiveChannel, Redis } from "@overseer/queue";
import type { SSEStreamingApi } from "hono/streaming";
import { spendView } from "../views/resource-views.ts";
import type { StreamHandle } from "./stream-registry.ts";

export interface RunLogStreamInput {
  readonly db: Db;
  readonly redis: Redis;
  readonly live: LiveChannel;
  readonly runId: string;
  /** Last stream entry id the client has; `0` from the start; `stored` when it already got the stored output. */
  readonly cursor: string;
  readonly keepAliveMs: number;
  readonly blockMs: number;
  readonly redact: (text: string) => string;
}

const ENDED = new Set(["finished", "failed", "cancelled"]);

/**
 * Streams a run's output as SSE `log` events (`data: {"text": …}`, `id:` = Redis stream
 * entry id, so Last-Event-ID resumes exactly after the last chunk received), then one `end`
 * event with the run's final status. A `usage` event (`data: {tokens_in, tokens_out,
 * tokens_cached, tokens_unpriced, cost_usd, cost}`) is sent whenever the run's recorded usage
 * changed (the worker reports it as the run goes): the live token/cost counter.
 *
 *   loop { drain entries after the cursor (XRANGE);
 *          run ended? → (stream gone and nothing sent: stored `runs.output`, id `stored`) → end;
 *          XREAD BLOCK for up to blockMs on a dedicated connection; keep-alive when due }
 *
 * The blocking read holds its own Redis connection (a blocked connection cannot serve other
 * commands); it is closed when the stream ends, which also interrupts a pending block when
 * the client disconnects or the gateway shuts down. The stored output is the fallback when
 * the Redis stream expired or Redis was flushed: Postgres keeps every run's (capped) output.
 */
export async function streamRunLog(
  stream: SSEStreamingApi,
  handle: StreamHandle,
  input: RunLogStreamInput,
): Promise<void> {
  const reader = input.redis.duplicate();
  reader.on("error", () => undefined);
  handle.onEnd(() => reader.disconnect());
  let cursor = input.cursor;
  let lastKeepAlive = Date.now();
  await stream.write(`retry: 2000\n: connected\n\n`);

  const send = async (entries: { id: string; data: string }[]) => {
    for (const entry of entries) {
      if (handle.ended) return;
      await stream.writeSSE({
        event: "log",
        id: entry.id,
        data: JSON.stringify({ text: input.redact(entry.data) }),
      });
      cursor = entry.id;
    }
  };

  let usageSent = "";
  const sendUsage = async (run: NonNullable<Awaited<ReturnType<typeof getRun>>>) => {
    const usage = {
      tokens_in: Number(run.tokens_in),
      tokens_out: Number(run.tokens_out),
      tokens_cached: Number(run.tokens_cached),
      ...spendView(run),
    };
    const data = JSON.stringify(usage);
    if (data === usageSent || (usageSent === "" && usage.tokens_in + usage.tokens_out === 0)) return;
    usageSent = data;
    await stream.writeSSE({ event: "usage", data });
  };

  while (!handle.ended) {
    if (cursor !== "stored") {
      const entries = await input.live.readLog(input.runId, cursor, 1000);
      if (entries.length > 0) {
        await send(entries);
        continue;
      }
    }
    const run = await getRun(input.db, input.runId);
    if (run) await sendUsage(run);
    if (!run || ENDED.has(run.status)) {
      if (
        run &&
        cursor === "0" &&
        (await input.redis.exists(input.live.logKey(input.runId))) === 0 &&
        run.output
      ) {
        await stream.writeSSE({
          event: "log",
          id: "stored",
          data: JSON.stringify({
            text: input.redact(run.output),
            stored: true,
            truncated: run.output_truncated,
          }),
        });
      }
      await stream.writeSSE({
        event: "end",
        data: JSON.stringify({
          run_id: input.runId,
          status: run?.status ?? "unknown",
          transition: run?.transition ?? null,
          exit_code: run?.exit_code ?? null,
          failure: run?.failure ?? null,
        }),
      });
      return;
    }
    const entries = await input.live
      .waitLog(reader, input.runId, cursor === "stored" ? "0" : cursor, input.blockMs)
      .catch((error) => {
        if (handle.ended) return [];
        throw error;
      });
    if (entries.length > 0) {
      await send(entries);
      continue;
    }
    if (Date.now() - lastKeepAlive >= input.keepAliveMs) {
      await stream.write(": keep-alive\n\n");
      lastKeepAlive = Date.now();
    }
  }
}
