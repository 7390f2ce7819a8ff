import type { Decision } from "./decision.ts";
import type { MissionState } from "./mission.ts";
import type { Run } from "./run.ts";
import type { Task } from "./task.ts";

/** `completed`: a mission's objective was met and approved (a new start reopens it). */
export const PROJECT_STATUSES = ["active", "paused", "stopped", "completed"] as const;
export type ProjectStatus = (typeof PROJECT_STATUSES)[number];

/** A project id: a lowercase slug (it names branches, Redis keys and URLs), at most 63 characters. */
export const PROJECT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/**
 * A stage name (`S01`): the one pattern for task stages, `start --stage` and a mission's
 * stage, wherever they come from. It is printed in terminals and the dashboard, so it admits
 * no control characters, spaces or escape sequences.
 */
export const STAGE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$/;
export const STAGE_EXPECTED =
  "a stage name such as S01: a letter or digit, then at most 31 letters, digits, ., _ or -";

/** The part of a project the state machine reads and changes. */
export interface ProjectControl {
  readonly id: string;
  readonly status: ProjectStatus;
  readonly statusReason: string | null;
  readonly continuous: boolean;
  /** Runs (agent processes) at once for this project; default 1 (docs/state-machine.md rule 11). */
  readonly concurrency: number;
  /** `max_sessions` of the current start; null = unbounded. */
  readonly sessionsLimit: number | null;
  /** Processes started in the current start. */
  readonly sessionsUsed: number;
  /** Stage requested by the current start; null = every stage. */
  readonly stage: string | null;
  /** The project's mission, if one was started. */
  readonly mission: MissionState | null;
  readonly version: number;
}

/**
 * What the state machine needs to decide: the project, all of its tasks, every active run
 * (plus any run a command names) and every decision card that is pending (plus any a
 * command names).
 */
export interface ProjectState {
  readonly project: ProjectControl;
  readonly tasks: ReadonlyMap<string, Task>;
  readonly runs: ReadonlyMap<string, Run>;
  readonly decisions: ReadonlyMap<string, Decision>;
}

/** Injected sources of time and randomness keep the state machine pure and replayable. */
export interface DomainContext {
  /** Epoch ms. */
  readonly now: number;
  /** 12 lowercase hex characters, fresh on each call. */
  readonly randomHex: () => string;
  /** A new unique run id. */
  readonly newRunId: () => string;
}
