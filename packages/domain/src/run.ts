import { TASK_DEFAULTS } from "./task.ts";

/** One agent process. Its id is the idempotency key of everything it causes. */
export const RUN_ACTIONS = ["execute", "review", "resolve"] as const;
export type RunAction = (typeof RUN_ACTIONS)[number];

/**
 * queued → running → finished (ended with a transition) | failed (no transition, timeout,
 * crash, error) | cancelled. Only queued and running runs are active.
 */
export const RUN_STATUSES = ["queued", "running", "finished", "failed", "cancelled"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const TRANSITION_KINDS = ["submit", "approve", "reject", "escalate"] as const;
export type TransitionKind = (typeof TRANSITION_KINDS)[number];

export interface Run {
  readonly id: string;
  readonly projectId: string;
  readonly taskId: string;
  readonly agentId: string;
  readonly action: RunAction;
  /** 1 for the first run of this action in a row, +1 per retry after a failure. */
  readonly attempt: number;
  readonly status: RunStatus;
  readonly transition: TransitionKind | null;
  /** Why it failed, in words (timeout, no transition, crash, error). */
  readonly failure: string | null;
  /** Epoch ms before which the job must not start (retry backoff). */
  readonly notBefore: number | null;
  readonly createdAt: number;
  /** Worker that runs it (the latest one after a redelivery); null while queued. */
  readonly workerId: string | null;
  /** Epoch ms the current worker reported starting it; null while queued. */
  readonly startedAt: number | null;
}

export function isActiveRun(run: Run): boolean {
  return run.status === "queued" || run.status === "running";
}

/** `<action>-<role>-<12 hex>`, docs/state-machine.md. */
export function formatAgentId(action: RunAction, role: string, hex12: string): string {
  const roleSlug =
    role
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 32) || TASK_DEFAULTS.role;
  return `${action}-${roleSlug}-${hex12}`;
}

export const AGENT_ID_PATTERN = /^(execute|review|resolve)-[a-z0-9-]+-[0-9a-f]{12}$/;
