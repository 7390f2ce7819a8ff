/** BullMQ queues (under the configured prefix). */
export const RUN_QUEUE = "runs";
export const RESULT_QUEUE = "results";

export function runJobId(runId: string): string {
  return `run-${runId}`;
}

export function resultJobId(runId: string): string {
  return `result-${runId}`;
}

export function startedJobId(runId: string): string {
  return `started-${runId}`;
}
