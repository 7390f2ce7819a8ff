import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectDatabase,
  createScratchDatabase,
  type DbHandle,
  type ScratchDatabase,
  sql,
} from "../src/index.ts";

// A pooled connection is kept through a lull (a new one costs Postgres a backend and the
// preparation of its statements again) and closed once idle for the pool's idle timeout.

let scratch: ScratchDatabase;
const handles: DbHandle[] = [];

beforeAll(async () => {
  scratch = await createScratchDatabase();
});

afterAll(async () => {
  await Promise.all(handles.map((h) => h.close()));
  await scratch?.drop();
});

function connect(idleTimeoutMs?: number): DbHandle {
  const handle = connectDatabase(scratch.url, { max: 1, idleTimeoutMs });
  handles.push(handle);
  return handle;
}

async function backendPid(handle: DbHandle): Promise<number> {
  const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(handle.db);
  return rows[0]!.pid;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the pool's idle connections", () => {
  it("stay open while idle for less than the idle timeout, and close after it", async () => {
    const kept = connect(2_000);
    const closed = connect(100);
    const [keptPid, closedPid] = [await backendPid(kept), await backendPid(closed)];
    await pause(400);
    expect(await backendPid(kept)).toBe(keptPid);
    expect(await backendPid(closed)).not.toBe(closedPid);
  });
});
