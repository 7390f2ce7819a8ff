import type { Logger } from "@overseer/config";
import type { ControlTransition, HarnessRunResult } from "@overseer/harness";
import type { RunJob, RunOutcome } from "@overseer/queue";
import { refusedTransition } from "./transition-policy.ts";

/**
 * Phase 3: what the run amounts to. The agent's transition (its words redacted), a timeout or
 * stall, or an end without one; then a transition the run may not make becomes a
 * `forbidden_transition` violation, before anything is committed or landed.
 */
export function decideOutcome(
  job: RunJob,
  harness: HarnessRunResult,
  taskHead: string | null,
  redact: (text: string) => string,
  log: Logger,
): RunOutcome {
  return refuseForbidden(job, outcomeOf(harness, redact), taskHead, log);
}

function outcomeOf(harness: HarnessRunResult, redact: (text: string) => string): RunOutcome {
  if (harness.transition) {
    return {
      kind: "transition",
      transition: toQueueTransition(harness.transition, redact),
      usage: usageOf(harness.transition),
    };
  }
  if (harness.timedOut || harness.stalled) {
    return { kind: "timeout", stalled: harness.stalled, seconds: Math.round(harness.durationMs / 1000) };
  }
  const crashed = harness.signal !== null && harness.signal !== "SIGTERM";
  const why = harness.controlError
    ? `its control file was refused: ${harness.controlError}`
    : `exit ${harness.exitCode ?? "-"}${harness.signal ? ` (signal ${harness.signal})` : ""} without calling overseer-agent`;
  return { kind: "no-transition", crashed, detail: `the harness ended without a transition: ${why}` };
}

/**
 * A transition the run may not make becomes a violation before any git work: nothing is
 * landed or pushed for it (an executor's work is kept as a checkpoint), and the coordinator
 * records an incident.
 */
function refuseForbidden(job: RunJob, outcome: RunOutcome, taskHead: string | null, log: Logger): RunOutcome {
  if (outcome.kind !== "transition") return outcome;
  const refused = refusedTransition(job, outcome.transition.kind, taskHead);
  if (refused === null) return outcome;
  log.warn({ transition: outcome.transition.kind, reason: refused }, "refused the agent's transition");
  return { kind: "violation", violation: "forbidden_transition", detail: refused };
}

/** The agent's words, with every configured secret redacted before they reach git, Redis or Postgres. */
function toQueueTransition(t: ControlTransition, redact: (text: string) => string) {
  const r = <T extends string | undefined>(text: T): T => (text === undefined ? text : (redact(text) as T));
  switch (t.kind) {
    case "submit":
      return { kind: "submit" as const, message: r(t.message), summary: r(t.summary) };
    case "approve":
      return { kind: "approve" as const, feedback: r(t.feedback) };
    case "reject":
      return { kind: "reject" as const, feedback: r(t.feedback) };
    case "escalate":
      return {
        kind: "escalate" as const,
        reason: r(t.reason),
        needsUser: t.needs_user,
        category: t.category,
        question: r(t.question),
        options: t.options.map((o) => ({
          id: o.id,
          label: r(o.label),
          description: r(o.description),
          requires_note: o.requires_note,
        })),
      };
  }
}

export function usageOf(t: ControlTransition | null) {
  const u = t?.usage;
  if (!u) return undefined;
  return { tokensIn: u.tokens_in, tokensOut: u.tokens_out, costUsd: u.cost_usd };
}
