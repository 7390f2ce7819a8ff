import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectDatabase,
  createScratchDatabase,
  type DbHandle,
  type ScratchDatabase,
  sql,
} from "../src/index.ts";

// A connection the server closes (restart, pg_terminate_backend) must fail only what was in
// flight on it: the pool keeps serving queries and transactions, and LISTEN comes back.

let scratch: ScratchDatabase;
let handle: DbHandle;
const errors: Error[] = [];

beforeAll(async () => {
  scratch = await createScratchDatabase();
  // One connection, so every later query must go through a replacement of the killed one.
  handle = connectDatabase(scratch.url, {
    max: 1,
    applicationName: `${scratch.name}_dropped`,
    onConnectionError: (error) => errors.push(error),
  });
});

afterAll(async () => {
  await handle?.close();
  await scratch?.drop();
});

async function backendPid(): Promise<number> {
  const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(handle.db);
  return rows[0]!.pid;
}

async function terminate(pid: number): Promise<void> {
  const { rows } = await sql<{ ok: boolean }>`SELECT pg_terminate_backend(${pid}) AS ok`.execute(scratch.db);
  expect(rows[0]?.ok).toBe(true);
}

async function countProjects(): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM projects`.execute(handle.db);
  return Number(rows[0]!.n);
}

describe("a terminated backend", () => {
  it("fails the open transaction, and the pool still serves queries and transactions", async () => {
    let pidInTransaction = 0;
    let release: () => void = () => {};
    const blocked = new Promise<void>((resolve) => (release = resolve));
    const opened = handle.db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
      pidInTransaction = rows[0]!.pid;
      await blocked;
      await sql`SELECT 1`.execute(trx);
    });
    const outcome = opened.then(
      () => "committed",
      (error: Error) => error.message,
    );
    while (pidInTransaction === 0) await new Promise((r) => setTimeout(r, 10));
    // A second query queued behind the transaction on the single connection.
    const queued = countProjects();
    await terminate(pidInTransaction);
    release();
    expect(await outcome).not.toBe("committed");
    expect(await queued).toBe(0);

    expect(await backendPid()).not.toBe(pidInTransaction);
    await handle.db.transaction().execute(async (trx) => {
      await sql`CREATE TABLE after_kill (n int)`.execute(trx);
      await sql`INSERT INTO after_kill VALUES (1), (2)`.execute(trx);
    });
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM after_kill`.execute(handle.db);
    expect(rows[0]?.n).toBe("2");
  });

  it("fails the statement running on it, and the next one runs on a new connection", async () => {
    const pid = await backendPid();
    const sleeping = sql`SELECT pg_sleep(30)`.execute(handle.db).then(
      () => "finished",
      () => "failed",
    );
    await waitUntil(async () => {
      const { rows } = await sql<{ n: string }>`
        SELECT count(*) AS n FROM pg_stat_activity WHERE pid = ${pid} AND query LIKE '%pg_sleep%' AND state = 'active'`.execute(
        scratch.db,
      );
      return rows[0]!.n === "1";
    });
    await terminate(pid);
    expect(await sleeping).toBe("failed");
    expect(await backendPid()).not.toBe(pid);
  });

  it("of an idle pooled connection is discarded without an uncaught error", async () => {
    const pid = await backendPid();
    const before = errors.length;
    await terminate(pid);
    await waitUntil(() => errors.length > before);
    expect(await backendPid()).not.toBe(pid);
  });

  it("of the LISTEN connection is replaced, LISTENs again and tells the subscriber", async () => {
    const payloads: string[] = [];
    let listens = 0;
    const subscription = await handle.notifications.listen(
      "dropped_test",
      (payload) => payloads.push(payload),
      () => listens++,
    );
    try {
      expect(listens).toBe(1);
      const listenerPid = async () => {
        const { rows } = await sql<{ pid: number }>`
          SELECT pid FROM pg_stat_activity
          WHERE application_name = ${`${scratch.name}_dropped`} AND query LIKE 'LISTEN%'`.execute(scratch.db);
        return rows[0]?.pid;
      };
      const first = await waitUntil(listenerPid);
      await terminate(first);
      await waitUntil(() => listens >= 2);
      await waitUntil(async () => {
        await sql`SELECT pg_notify('dropped_test', 'after')`.execute(scratch.db);
        return payloads.includes("after");
      });
      expect(await listenerPid()).not.toBe(first);
    } finally {
      await subscription.unlisten();
    }
  });
});

async function waitUntil<T>(check: () => Promise<T | undefined | false> | T | undefined | false): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error("condition not met within 30 s");
    await new Promise((r) => setTimeout(r, 50));
  }
}
