import { createRedis } from "@overseer/queue";
import { startRedisSentinels } from "./support/redis-topology.ts";

const g = await startRedisSentinels();
const r = createRedis(g.target);
for (const ev of ["close", "end", "reconnecting", "ready", "+node"])
  r.on(ev, (...a: unknown[]) => console.log(Date.now() % 100000, "event", ev, a[0] ?? ""));
r.on("error", (e) => console.log(Date.now() % 100000, "error", e.message));
let stop = false;
const loop = (async () => {
  while (!stop) {
    try {
      await r.incr("x");
    } catch (e) {
      console.log("cmd err", (e as Error).message, r.status);
    }
    await new Promise((x) => setTimeout(x, 200));
  }
})();
await new Promise((x) => setTimeout(x, 1000));
console.log("killing", await g.killPrimary());
await new Promise((x) => setTimeout(x, 8000));
console.log("status", r.status, await r.get("x").catch((e) => e.message));
stop = true;
await loop;
r.disconnect();
await g.stop();
