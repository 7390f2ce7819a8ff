import { useEffect, useState } from "preact/hooks";

/**
 * Hash routes (`#/project/demo`), so every view is a link that survives a reload and the
 * gateway serves one HTML file. Routes carry ids only, never the token.
 */
export type Route =
  | { view: "fleet" }
  | { view: "needs" }
  | { view: "incidents" }
  | { view: "deliveries" }
  | { view: "workers" }
  | { view: "charts"; project: string | null }
  | { view: "project"; project: string }
  | { view: "intake"; project: string }
  | { view: "task"; project: string; task: string }
  | { view: "run"; run: string };

export function parseRoute(hash: string): Route {
  const parts = hash
    .replace(/^#\/?/, "")
    .split("/")
    .filter((p) => p !== "")
    .map((p) => decodeURIComponent(p));
  const [head, a, b, c] = parts;
  if (head === "needs") return { view: "needs" };
  if (head === "incidents") return { view: "incidents" };
  if (head === "notifications") return { view: "deliveries" };
  if (head === "workers") return { view: "workers" };
  if (head === "charts") return { view: "charts", project: a ?? null };
  if (head === "run" && a) return { view: "run", run: a };
  if (head === "project" && a && b === "intake") return { view: "intake", project: a };
  if (head === "project" && a && b === "task" && c) return { view: "task", project: a, task: c };
  if (head === "project" && a) return { view: "project", project: a };
  return { view: "fleet" };
}

export const href = {
  fleet: () => "#/",
  needs: () => "#/needs",
  incidents: () => "#/incidents",
  deliveries: () => "#/notifications",
  workers: () => "#/workers",
  charts: (project?: string | null) => (project ? `#/charts/${encodeURIComponent(project)}` : "#/charts"),
  project: (id: string) => `#/project/${encodeURIComponent(id)}`,
  intake: (id: string) => `#/project/${encodeURIComponent(id)}/intake`,
  task: (id: string, task: string) => `#/project/${encodeURIComponent(id)}/task/${encodeURIComponent(task)}`,
  run: (run: string) => `#/run/${encodeURIComponent(run)}`,
};

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}
