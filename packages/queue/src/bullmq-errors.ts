import { isNotConnectionError } from "bullmq";
import type { Redis } from "./redis-connection.ts";

/** Where BullMQ objects report their errors: the service's pino logger (or one of its shape). */
export interface QueueErrorLog {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
  info(details: object, message: string): void;
}

/** Anything of BullMQ that emits 'error' (Queue, Worker, QueueEvents, FlowProducer). */
interface ErrorEmitter {
  on(event: "error", listener: (error: Error) => void): unknown;
}

/** One Redis connection's outage: logged when it starts and when it ends, not per retry. */
interface Outage {
  down: boolean;
  suppressed: number;
}

const outages = new WeakMap<Redis, Outage>();

/**
 * Gives a BullMQ object its 'error' listener. Without one, BullMQ prints what its connection
 * reports through console.error (QueueBase.emit falls back to it, e.g. for a queue's job
 * scheduler), once per reconnect attempt, beside the service's logs. With `log` (the service's
 * logger): a connection error (refused, reset, closed) is one warning per outage of `connection`,
 * however many objects share it and however often the client retries; the connection's next
 * 'ready' ends the outage with one line. Any other error is logged as it comes. Without `log`
 * (tests, tools) the errors are dropped, as `createRedis` drops the connection's own: every
 * command still reports its failure to its caller.
 */
export function listenForBullmqErrors(
  emitter: ErrorEmitter,
  connection: Redis,
  log: QueueErrorLog | undefined,
  source: string,
): void {
  if (!log) {
    emitter.on("error", () => undefined);
    return;
  }
  const outage = outageOf(connection, log);
  emitter.on("error", (error) => {
    if (!isConnectionError(error)) {
      log.error({ err: error, source }, `${source}: BullMQ error`);
      return;
    }
    if (outage.down) {
      outage.suppressed += 1;
      return;
    }
    outage.down = true;
    log.warn(
      { err: error, source },
      "Redis is unreachable; BullMQ retries until it is back (further errors of this outage are not logged)",
    );
  });
}

function outageOf(connection: Redis, log: QueueErrorLog): Outage {
  let outage = outages.get(connection);
  if (!outage) {
    const created: Outage = { down: false, suppressed: 0 };
    connection.on("ready", () => {
      if (!created.down) return;
      log.info({ suppressedErrors: created.suppressed }, "Redis is reachable again");
      created.down = false;
      created.suppressed = 0;
    });
    outages.set(connection, created);
    outage = created;
  }
  return outage;
}

/** A failure to reach Redis (not one of a command or a script): a system error or a closed connection. */
function isConnectionError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return (typeof code === "string" && /^E[A-Z]+$/.test(code)) || !isNotConnectionError(error);
}
