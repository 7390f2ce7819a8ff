import { useState } from "preact/hooks";
import { client } from "../api/client.ts";
import { Empty, Load } from "../components/states.tsx";
import { WorkerPools } from "../components/worker-pools.tsx";
import { ago } from "../lib/format.ts";
import { useLoad, useSession } from "../lib/hooks.ts";
import { href } from "../lib/router.ts";

/** Workers (heartbeats, slots, sandbox, current jobs) and queue depths. */
export function WorkersView() {
  const workers = useLoad(() => client.workers(), "workers", 5000);
  const queues = useLoad(() => client.queues(), "queues", 5000);
  return (
    <section aria-labelledby="workers-title">
      <h1 id="workers-title">Workers and queues</h1>
      <h2>Queues</h2>
      <QueueBoardButton />
      <Load state={queues} what="queue depths">
        {(q) => (
          <div class="queues">
            {(["runs", "results"] as const).map((name) => (
              <table key={name} class="queue-table">
                <caption>{name} queue</caption>
                <tbody>
                  {Object.entries(q[name]).map(([state, n]) => (
                    <tr key={state}>
                      <th scope="row">{state}</th>
                      <td>{n}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            ))}
          </div>
        )}
      </Load>
      <h2>Workers</h2>
      <Load state={workers} what="workers">
        {(w) =>
          w.workers.length === 0 ? (
            <Empty>
              No worker has sent a heartbeat in the last {Math.round(w.stale_after_ms / 1000)} s. Start one
              with the worker service.
            </Empty>
          ) : (
            <>
              {w.workers.some((x) => x.unsafe) ? (
                <p class="error unsafe" role="alert">
                  UNSAFE:{" "}
                  {w.workers
                    .filter((x) => x.unsafe)
                    .map((x) => x.id)
                    .join(", ")}{" "}
                  run agents WITHOUT a sandbox (OVERSEER_SANDBOX=none).
                </p>
              ) : null}
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Worker</th>
                      <th scope="col">Host</th>
                      <th scope="col">Pools</th>
                      <th scope="col">Sandbox</th>
                      <th scope="col">Slots</th>
                      <th scope="col">Heartbeat</th>
                      <th scope="col">Current jobs</th>
                    </tr>
                  </thead>
                  <tbody>
                    {w.workers.map((x) => (
                      <tr key={x.id} data-testid={`worker-${x.id}`}>
                        <td>{x.id}</td>
                        <td>
                          {x.host} (pid {x.pid})
                        </td>
                        <td>
                          <WorkerPools worker={x} />
                        </td>
                        <td class={x.unsafe ? "error" : ""}>{x.sandbox}</td>
                        <td>
                          {x.current_jobs.length}/{x.slots} busy
                        </td>
                        <td>{ago(x.heartbeat_at)}</td>
                        <td>
                          {x.current_jobs.length === 0
                            ? "idle"
                            : x.current_jobs.map((j) => (
                                <div key={j.run_id}>
                                  <a href={href.run(j.run_id)}>
                                    {j.project_id}/{j.task_id} {j.action}
                                  </a>{" "}
                                  <span class="muted">since {ago(j.since)}</span>
                                </div>
                              ))}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          )
        }
      </Load>
    </section>
  );
}

/**
 * Admin tokens only: opens Bull Board. The token goes in a bearer header to a POST that sets
 * an HttpOnly cookie scoped to /admin/queues; the board page itself never sees the token.
 */
function QueueBoardButton() {
  const session = useSession();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (session?.scope !== "admin") return null;
  const open = async () => {
    setBusy(true);
    setError(null);
    try {
      const board = await client.openQueueBoard();
      window.location.assign(board.path);
    } catch (e) {
      setError((e as Error).message);
      setBusy(false);
    }
  };
  return (
    <p>
      <button type="button" onClick={open} disabled={busy}>
        Open queue board (Bull Board)
      </button>
      {error ? (
        <span class="error" role="alert">
          {" "}
          {error}
        </span>
      ) : null}
    </p>
  );
}
