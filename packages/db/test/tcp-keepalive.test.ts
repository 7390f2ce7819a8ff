import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  connectDatabase,
  createScratchDatabase,
  type DbHandle,
  type ScratchDatabase,
  sql,
} from "../src/index.ts";

// A peer that vanishes without a FIN (host down, link cut, a NAT that forgot the flow) leaves an
// idle connection open for ever unless TCP keepalive probes it. Both the pool's connections and
// the LISTEN connection carry it: the kernel shows their keepalive timer (ss -o).

const run = promisify(execFile);
let scratch: ScratchDatabase;
let handle: DbHandle;

beforeAll(async () => {
  scratch = await createScratchDatabase();
  handle = connectDatabase(scratch.url, { max: 1, applicationName: `${scratch.name}_keepalive` });
});

afterAll(async () => {
  await handle?.close();
  await scratch?.drop();
});

/** The kernel's timer on the client side of the connection whose backend answers `where`. */
async function clientTimer(where: "pool" | "listener"): Promise<string> {
  const { rows } = await sql<{ port: number | null }>`
    SELECT client_port AS port FROM pg_stat_activity
    WHERE application_name = ${`${scratch.name}_keepalive`}
      AND (${where} = 'pool' AND pid <> pg_backend_pid() OR ${where} = 'listener' AND query LIKE 'LISTEN%')
  `.execute(where === "pool" ? scratch.db : handle.db);
  const port = rows[0]?.port;
  if (!port) throw new Error(`no TCP connection found for the ${where} (is the URL a Unix socket?)`);
  const { stdout } = await run("ss", ["-tnoH", "state", "established", `( sport = :${port} )`]);
  return stdout;
}

describe("TCP keepalive", () => {
  it("is on for the pool's connections", async () => {
    await sql`SELECT 1`.execute(handle.db);
    expect(await clientTimer("pool")).toMatch(/timer:\(keepalive,/);
  });

  it("is on for the LISTEN connection", async () => {
    const subscription = await handle.notifications.listen("keepalive_probe", () => {});
    expect(await clientTimer("listener")).toMatch(/timer:\(keepalive,/);
    await subscription.unlisten();
  });
});
