import { getToken } from "../lib/token-store.ts";
import { type ReadAnswer, RevalidatingReader } from "./revalidation.ts";
import type {
  CommitDiff,
  DecisionCard,
  Delivery,
  Fleet,
  Incident,
  IntakeSource,
  PendingDecision,
  Project,
  ProjectEvent,
  ProjectStatus,
  Run,
  RunStats,
  RunSummary,
  RunTranscript,
  Session,
  Task,
  TaskTranscript,
  TrackerUpdate,
  Worker,
} from "./types.ts";

/** An answer other than 2xx: the gateway's `{error:{code,message}}` when it sent one. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Every call carries the token as a bearer header; the token is never put in a URL. */
export async function api<T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
  const { headers } = requestHeaders(body !== undefined);
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw networkFailure(error);
  }
  const data = await res.json().catch(() => null);
  return answer<T>(res.status, res.ok, data);
}

const revalidating = new RevalidatingReader();

/**
 * A GET of an answer the gateway tags with an ETag, asked again with If-None-Match
 * (revalidation.ts): an unchanged answer costs a 304 and is the same object as before.
 */
async function revalidatedGet<T>(path: string): Promise<T> {
  const { token, headers } = requestHeaders(false);
  let read: ReadAnswer;
  try {
    read = await revalidating.get(path, token, headers);
  } catch (error) {
    throw networkFailure(error);
  }
  return answer<T>(read.status, read.ok, read.data);
}

function requestHeaders(json: boolean): { token: string; headers: Record<string, string> } {
  const headers: Record<string, string> = { Accept: "application/json" };
  const token = getToken();
  if (token) headers.Authorization = `Bearer ${token}`;
  if (json) headers["Content-Type"] = "application/json";
  return { token, headers };
}

function networkFailure(error: unknown): ApiFailure {
  return new ApiFailure(0, "network", `The gateway did not answer (${(error as Error).message}).`);
}

function answer<T>(status: number, ok: boolean, body: unknown): T {
  const data = body as (T & { error?: { code: string; message: string } }) | null;
  if (!ok) {
    throw new ApiFailure(status, data?.error?.code ?? "http", data?.error?.message ?? `HTTP ${status}`);
  }
  return data as T;
}

const enc = encodeURIComponent;
const query = (params: Record<string, string | number | undefined | null>) => {
  const q = Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== "")
    .map(([k, v]) => `${enc(k)}=${enc(String(v))}`)
    .join("&");
  return q ? `?${q}` : "";
};

type Change = { application_status: string };

/** The gateway's routes used by the app, typed by the gateway's own schemas. */
export const client = {
  session: () => api<Session>("GET", "/api/v1/session"),
  // Polled every 5 s by the fleet view: revalidated, an unchanged fleet is a 304 of no body.
  fleet: () => revalidatedGet<Fleet>("/api/v1/fleet"),
  projects: () => api<{ projects: Project[] }>("GET", "/api/v1/projects"),
  project: (id: string) => api<Project>("GET", `/api/v1/projects/${enc(id)}`),
  status: (id: string) => api<ProjectStatus>("GET", `/api/projects/${enc(id)}/status`),
  tasks: (id: string, cursor?: string | null) =>
    api<{ tasks: Task[]; next_cursor: string | null }>(
      "GET",
      `/api/v1/projects/${enc(id)}/tasks${query({ limit: 1000, cursor })}`,
    ),
  task: (id: string, taskId: string) => api<Task>("GET", `/api/v1/projects/${enc(id)}/tasks/${enc(taskId)}`),
  runs: (id: string, params: { task?: string; limit?: number; before?: string | null } = {}) =>
    api<{ runs: RunSummary[]; next_before: string | null }>(
      "GET",
      `/api/v1/projects/${enc(id)}/runs${query(params)}`,
    ),
  run: (runId: string) => api<Run>("GET", `/api/v1/runs/${enc(runId)}`),
  prompt: (runId: string) =>
    api<{ run_id: string; prompt: string | null; prompt_chars: number | null }>(
      "GET",
      `/api/v1/runs/${enc(runId)}/prompt`,
    ),
  runLog: (runId: string) =>
    api<{ run_id: string; status: string; output: string | null; truncated: boolean }>(
      "GET",
      `/api/v1/runs/${enc(runId)}/log`,
    ),
  runTranscript: (id: string, runId: string) =>
    api<RunTranscript>("GET", `/api/v1/projects/${enc(id)}/runs/${enc(runId)}/transcript`),
  taskTranscript: (id: string, taskId: string) =>
    api<TaskTranscript>("GET", `/api/v1/projects/${enc(id)}/tasks/${enc(taskId)}/transcript`),
  diff: (runId: string) => api<CommitDiff>("GET", `/api/v1/runs/${enc(runId)}/diff`),
  events: (id: string, params: { task?: string; after?: string; limit?: number } = {}) =>
    api<{ events: ProjectEvent[]; next_after: string | null }>(
      "GET",
      `/api/v1/projects/${enc(id)}/events${query(params)}`,
    ),
  incidents: (id: string) =>
    api<{ incidents: Incident[] }>("GET", `/api/v1/projects/${enc(id)}/incidents?limit=200`),
  allIncidents: () => api<{ incidents: Incident[] }>("GET", "/api/v1/incidents?limit=500"),
  deliveries: (status: string | null) =>
    api<{ deliveries: Delivery[]; next_before: string | null }>(
      "GET",
      `/api/v1/notifications/deliveries${query({ status, limit: 200 })}`,
    ),
  redeliver: (deliveryId: string) =>
    api<{ delivery: Delivery; redelivered: boolean }>(
      "POST",
      `/api/v1/notifications/deliveries/${enc(deliveryId)}/redeliver`,
    ),
  intakeSources: (id: string) =>
    api<{ sources: IntakeSource[] }>("GET", `/api/v1/projects/${enc(id)}/intake/sources`),
  removeIntakeSource: (id: string, sourceId: string) =>
    api<{ id: string; removed: true }>(
      "DELETE",
      `/api/v1/projects/${enc(id)}/intake/sources/${enc(sourceId)}`,
    ),
  trackerUpdates: (id: string, status: string | null) =>
    api<{ updates: TrackerUpdate[]; next_before: string | null }>(
      "GET",
      `/api/v1/intake/updates${query({ project_id: id, status, limit: 200 })}`,
    ),
  redeliverTrackerUpdate: (updateId: string) =>
    api<{ update: TrackerUpdate; redelivered: boolean }>(
      "POST",
      `/api/v1/intake/updates/${enc(updateId)}/redeliver`,
    ),
  workers: () => api<{ workers: Worker[]; stale_after_ms: number }>("GET", "/api/v1/workers"),
  queues: () =>
    api<{ runs: Record<string, number>; results: Record<string, number> }>("GET", "/api/v1/queues"),
  /** Admin only: sets the HttpOnly cookie of the Bull Board (`/admin/queues`) from the bearer token. */
  openQueueBoard: () =>
    api<{ path: string; expires_in_seconds: number }>("POST", "/api/v1/admin/queues/session"),
  decisions: () => api<{ decisions: PendingDecision[] }>("GET", "/api/v1/decisions"),
  stats: (minutes: number, bucketSeconds: number, project: string | null = null) =>
    api<RunStats>("GET", `/api/v1/stats/runs${query({ minutes, bucket_seconds: bucketSeconds, project })}`),
  resolve: (id: string, decisionId: string, optionId: string, note: string | null) =>
    api<{ resolution_id: string; application_status: string; decision: DecisionCard }>(
      "POST",
      `/api/projects/${enc(id)}/decisions/${enc(decisionId)}/resolve`,
      { option_id: optionId, note },
    ),
  setProjectStatus: (id: string, verb: "pause" | "resume" | "stop", reason?: string) =>
    api<Change & { project: Project }>(
      "POST",
      `/api/v1/projects/${enc(id)}/${verb}`,
      reason ? { reason } : {},
    ),
  start: (id: string, stage: string | null, maxSessions: number | null) =>
    api<{ project: Project }>("POST", `/api/v1/projects/${enc(id)}/start`, {
      stage,
      max_sessions: maxSessions,
    }),
  cancelTask: (id: string, taskId: string, reason?: string) =>
    api<Change>("POST", `/api/v1/projects/${enc(id)}/tasks/${enc(taskId)}/cancel`, reason ? { reason } : {}),
  releaseExternal: (id: string, taskId: string, reason: string) =>
    api<Change>("POST", `/api/v1/projects/${enc(id)}/tasks/${enc(taskId)}/release-external`, { reason }),
};
