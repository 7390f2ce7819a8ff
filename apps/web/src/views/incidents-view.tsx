import { useState } from "preact/hooks";
import { client } from "../api/client.ts";
import { Empty, Load } from "../components/states.tsx";
import { formatTime } from "../lib/format.ts";
import { useLoad } from "../lib/hooks.ts";
import { href } from "../lib/router.ts";

const PAGE = 100;

/** Scope violations, configuration stops, timeouts, stalls and remediations, newest first. */
export function IncidentsView() {
  const incidents = useLoad(() => client.allIncidents(), "incidents", 10_000);
  const [kind, setKind] = useState("all");
  const [limit, setLimit] = useState(PAGE);
  return (
    <section aria-labelledby="incidents-title">
      <h1 id="incidents-title">Incidents</h1>
      <Load state={incidents} what="incidents">
        {(data) => {
          const kinds = [...new Set(data.incidents.map((i) => i.kind))].sort();
          const shown = kind === "all" ? data.incidents : data.incidents.filter((i) => i.kind === kind);
          if (data.incidents.length === 0)
            return <Empty>No incident: no scope violation, stop or remediation so far.</Empty>;
          return (
            <>
              <div class="toolbar">
                <label>
                  Kind{" "}
                  <select
                    value={kind}
                    onChange={(e) => setKind((e.currentTarget as HTMLSelectElement).value)}
                  >
                    <option value="all">all ({data.incidents.length})</option>
                    {kinds.map((k) => (
                      <option key={k} value={k}>
                        {k}
                      </option>
                    ))}
                  </select>
                </label>
              </div>
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Project</th>
                      <th scope="col">Kind</th>
                      <th scope="col">Task / run</th>
                      <th scope="col">Message</th>
                    </tr>
                  </thead>
                  <tbody>
                    {shown.slice(0, limit).map((i) => (
                      <tr key={i.id}>
                        <td>{formatTime(i.created_at)}</td>
                        <td>
                          <a href={href.project(i.project_id)}>{i.project_id}</a>
                        </td>
                        <td>
                          <span class="pill">{i.kind}</span>
                        </td>
                        <td>
                          {i.task_id ? <a href={href.task(i.project_id, i.task_id)}>{i.task_id}</a> : "–"}
                          {i.run_id ? (
                            <>
                              {" "}
                              · <a href={href.run(i.run_id)}>run</a>
                            </>
                          ) : null}
                        </td>
                        <td>{i.message}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {shown.length > limit ? (
                <button type="button" onClick={() => setLimit(limit + PAGE)}>
                  Show more ({shown.length - limit} left)
                </button>
              ) : null}
            </>
          );
        }}
      </Load>
    </section>
  );
}
