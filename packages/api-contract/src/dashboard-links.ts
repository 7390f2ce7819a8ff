/**
 * Links into the operator web app (its hash routes, apps/web router.ts) that messages leaving
 * Overseer carry: webhook payloads, pull request bodies, tracker comments. `base` is
 * `OVERSEER_DASHBOARD_URL` (null when unset: no link).
 */
export function dashboardPageUrl(
  base: string | null,
  projectId: string,
  taskId: string | null = null,
): string | null {
  if (base === null || base === "") return null;
  const task = taskId === null ? "" : `/task/${encodeURIComponent(taskId)}`;
  return `${base.replace(/\/+$/, "")}/#/project/${encodeURIComponent(projectId)}${task}`;
}
