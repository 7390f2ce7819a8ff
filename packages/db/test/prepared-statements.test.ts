import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectDatabase,
  createScratchDatabase,
  type DbHandle,
  type ScratchDatabase,
  sql,
} from "../src/index.ts";
import { PREPARED_PER_CONNECTION } from "../src/prepared-statements.ts";

// The pool's statements are named prepared statements of their connection (parsed once, plans
// reusable), and a connection holding too many of them, or one a schema change made stale, is
// replaced instead of failing its callers again.

let scratch: ScratchDatabase;
let handle: DbHandle;

beforeAll(async () => {
  scratch = await createScratchDatabase();
  // One connection: every statement below runs on it, or on its replacement.
  handle = connectDatabase(scratch.url, { max: 1, applicationName: `${scratch.name}_prepared` });
});

afterAll(async () => {
  await handle?.close();
  await scratch?.drop();
});

async function backendPid(): Promise<number> {
  const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid, ${1}::int AS one`.execute(
    handle.db,
  );
  return rows[0]!.pid;
}

/** The connection's prepared statements with this text, and how often each ran. */
async function preparedLike(pattern: string): Promise<{ name: string; runs: number }[]> {
  const { rows } = await sql<{ name: string; runs: string }>`
    SELECT name, (generic_plans + custom_plans)::text AS runs FROM pg_prepared_statements
    WHERE statement LIKE ${pattern}`.execute(handle.db);
  return rows.map((r) => ({ name: r.name, runs: Number(r.runs) }));
}

describe("prepared statements", () => {
  it("prepares a parameterized statement once per connection and runs it again by name", async () => {
    const pid = await backendPid();
    for (const n of [1, 2, 3]) {
      const { rows } = await sql<{ n: number }>`SELECT ${n}::int + 40 AS n`.execute(handle.db);
      expect(rows[0]?.n).toBe(n + 40);
    }
    const prepared = await preparedLike("SELECT $1::int + 40 AS n");
    expect(prepared).toEqual([{ name: expect.stringMatching(/^s_/), runs: 3 }]);
    expect(await backendPid()).toBe(pid);
  });

  it("leaves statements without parameters unnamed", async () => {
    await sql`SELECT 41 AS unparameterized`.execute(handle.db);
    expect(await preparedLike("%unparameterized%")).toEqual([]);
  });

  it("fails once on a statement a schema change made stale, then runs it on a new connection", async () => {
    await sql`CREATE TABLE stale_shape (a int)`.execute(handle.db);
    await sql`INSERT INTO stale_shape VALUES (1)`.execute(handle.db);
    const read = () => sql<{ a: number }>`SELECT * FROM stale_shape WHERE a = ${1}`.execute(handle.db);
    await read();
    const pid = await backendPid();
    await sql`ALTER TABLE stale_shape ADD COLUMN b int`.execute(scratch.db);
    await expect(read()).rejects.toThrow(/cached plan must not change result type/);
    const { rows } = await read();
    expect(rows).toEqual([{ a: 1, b: null }]);
    expect(await backendPid()).not.toBe(pid);
  });

  it(`retires a connection once it holds ${PREPARED_PER_CONNECTION} statements`, async () => {
    const pid = await backendPid();
    for (let i = 0; i < PREPARED_PER_CONNECTION; i++) {
      const { rows } = await sql<{ n: number }>`SELECT ${i}::int + ${sql.raw(String(i))} AS n`.execute(
        handle.db,
      );
      expect(rows[0]?.n).toBe(2 * i);
    }
    expect(await backendPid()).not.toBe(pid);
    // The new connection holds only those that ran after the old one was full (it held a few
    // statements of the earlier tests already).
    const moved = await preparedLike("SELECT $1::int + % AS n");
    expect(moved.length).toBeLessThan(10);
    expect(moved.every((s) => s.runs === 1)).toBe(true);
  });
});
