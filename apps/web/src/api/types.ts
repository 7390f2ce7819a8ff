/**
 * Response types of the gateway, inferred from the zod schemas of the API contract
 * (`@overseer/api-contract`; type-only imports: nothing of it reaches the bundle). A schema
 * change breaks this app's typecheck instead of its users.
 */

import type {
  CommitDiffSchema,
  DecisionCardSchema,
  DeliverySchema,
  EventSchema,
  FleetProjectSchema,
  FleetSchema,
  IncidentSchema,
  IntakeSourceSchema,
  PendingDecisionSchema,
  ProjectSchema,
  ProjectStatusSchema,
  RunSchema,
  RunStatsSchema,
  RunSummarySchema,
  RunTranscriptSchema,
  SessionSchema,
  TaskSchema,
  TaskTranscriptSchema,
  TrackerUpdateSchema,
  TranscriptEntrySchema,
  WorkerSchema,
} from "@overseer/api-contract";
import type { z } from "zod";

export type Session = z.infer<typeof SessionSchema>;
export type Fleet = z.infer<typeof FleetSchema>;
export type FleetProject = z.infer<typeof FleetProjectSchema>;
export type Project = z.infer<typeof ProjectSchema>;
export type ProjectStatus = z.infer<typeof ProjectStatusSchema>;
export type DecisionCard = z.infer<typeof DecisionCardSchema>;
export type PendingDecision = z.infer<typeof PendingDecisionSchema>;
export type Task = z.infer<typeof TaskSchema>;
export type Run = z.infer<typeof RunSchema>;
export type RunSummary = z.infer<typeof RunSummarySchema>;
export type ProjectEvent = z.infer<typeof EventSchema>;
export type Incident = z.infer<typeof IncidentSchema>;
export type Delivery = z.infer<typeof DeliverySchema>;
export type IntakeSource = z.infer<typeof IntakeSourceSchema>;
export type TrackerUpdate = z.infer<typeof TrackerUpdateSchema>;
export type Worker = z.infer<typeof WorkerSchema>;
export type RunStats = z.infer<typeof RunStatsSchema>;
export type CommitDiff = z.infer<typeof CommitDiffSchema>;
export type TranscriptEntry = z.infer<typeof TranscriptEntrySchema>;
export type RunTranscript = z.infer<typeof RunTranscriptSchema>;
export type TaskTranscript = z.infer<typeof TaskTranscriptSchema>;

export type TaskStatus = Task["status"];
/** Board columns, in order: every task status once. */
export const TASK_STATUS_ORDER = [
  "todo",
  "in_progress",
  "review",
  "pr_open",
  "awaiting_input",
  "blocked",
  "done",
  "cancelled",
] as const satisfies readonly TaskStatus[];
