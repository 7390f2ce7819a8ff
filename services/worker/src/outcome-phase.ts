import { classifyFailure, fixFor, type HarnessRunResult } from "@overseer/harness";
import { formatZodIssues } from "@overseer/input-errors";
import {
  type ControlTransition,
  ControlTransitionSchema,
  type RunJob,
  type RunOutcome,
  type RunUsage,
} from "@overseer/run-contract";
import type { Logger } from "@overseer/runtime";
import { describeTranscript, type TranscriptEntry } from "@overseer/transcript";
import { refusedTransition } from "./transition-policy.ts";

/**
 * Phase 3: what the run amounts to. The agent's transition (its words redacted), a timeout or
 * stall, or an end without one (its detail says what the transcript shows: the model's last
 * message, the failing command and its output tail); then a transition the run may not make
 * becomes a `forbidden_transition` violation, before anything is committed or landed.
 */
export function decideOutcome(
  job: RunJob,
  harness: HarnessRunResult,
  transcript: readonly TranscriptEntry[],
  taskHead: string | null,
  redact: (text: string) => string,
  log: Logger,
): RunOutcome {
  return refuseForbidden(job, outcomeOf(job, harness, transcript, redact), taskHead, log);
}

function outcomeOf(
  job: RunJob,
  harness: HarnessRunResult,
  transcript: readonly TranscriptEntry[],
  redact: (text: string) => string,
): RunOutcome {
  if (harness.transition) {
    // Redaction may lengthen text ([REDACTED] is longer than a short secret): the result must
    // still satisfy the contract the coordinator parses it with.
    const redacted = redactTransition(harness.transition, redact);
    const checked = ControlTransitionSchema.safeParse(redacted);
    if (checked.success) {
      return { kind: "transition", transition: checked.data };
    }
    return {
      kind: "no-transition",
      crashed: false,
      detail: `the harness's ${harness.transition.kind} no longer fits the control file limits once secrets are redacted (${formatZodIssues(checked.error.issues, redacted)}); shorten its text`,
    };
  }
  // What the run did, from its transcript (not a tail of raw JSON events); Copilot's is read
  // from its session file, so it is redacted here too.
  const said = redact(describeTranscript(transcript));
  // Name the cause from the run's last lines; a cause no retry can fix stops the project, also
  // when the CLI retried it until a time limit or the worker ended the run on seeing it.
  const cause = classifyFailure(harness.output);
  if (cause?.configuration) {
    return {
      kind: "misconfigured",
      reason: "configuration_error",
      message: `${cause.message}. Fix: ${fixFor(cause, job.projectId)}.\n${said}`,
    };
  }
  if (harness.timedOut || harness.stalled) {
    return {
      kind: "timeout",
      stalled: harness.stalled,
      seconds: Math.round(harness.durationMs / 1000),
      ...(harness.stalled ? { idleSeconds: Math.round(job.idleTimeoutMs / 1000) } : {}),
    };
  }
  const crashed = harness.signal !== null && harness.signal !== "SIGTERM";
  // A fork bomb or a memory hog stopped by the run's cgroup: named first, it is why the run failed.
  const limits = harness.limitsReached?.length
    ? `the run hit its sandbox limits (${harness.limitsReached.join("; ")}); `
    : "";
  const why = harness.controlError
    ? `its control file was refused: ${harness.controlError}`
    : `exit ${harness.exitCode ?? "-"}${harness.signal ? ` (signal ${harness.signal})` : ""} without calling overseer-agent`;
  // The model ended by itself and never called overseer-agent, with nothing else to blame.
  const protocolNotFollowed = cause === null && harness.controlError === null && harness.exitCode === 0;
  return {
    kind: "no-transition",
    crashed,
    detail: `${limits}${cause ? `${cause.message} (${fixFor(cause, job.projectId)}); ` : ""}the harness ended without a transition: ${why}.\n${said}`,
    ...(protocolNotFollowed ? { protocolNotFollowed: true } : {}),
  };
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

/**
 * The agent's words, with every configured secret redacted before they reach git, Redis or
 * Postgres. The shape stays the control file's own (`ControlTransitionSchema`), which is also
 * the run result's.
 */
function redactTransition(t: ControlTransition, redact: (text: string) => string): ControlTransition {
  switch (t.kind) {
    case "submit":
      return {
        ...t,
        message: redact(t.message),
        ...(t.summary !== undefined ? { summary: redact(t.summary) } : {}),
      };
    case "approve":
      return { ...t, ...(t.feedback !== undefined ? { feedback: redact(t.feedback) } : {}) };
    case "reject":
      return { ...t, feedback: redact(t.feedback) };
    case "escalate":
      return {
        ...t,
        reason: redact(t.reason),
        ...(t.question !== undefined ? { question: redact(t.question) } : {}),
        options: t.options.map((o) => ({
          ...o,
          label: redact(o.label),
          ...(o.description !== undefined ? { description: redact(o.description) } : {}),
        })),
      };
    case "plan":
      return {
        ...t,
        plan: redact(t.plan),
        ...(t.summary !== undefined ? { summary: redact(t.summary) } : {}),
      };
    case "complete":
      return { ...t, evidence: redact(t.evidence) };
  }
}

/**
 * What the run spent, whatever its outcome: what the CLI reported as its output streamed or in
 * its session files (its own counts, usage-tracker.ts) when it reported any, else what the
 * agent passed to overseer-agent.
 */
export function runUsage(
  counted: RunUsage | undefined,
  transition: ControlTransition | null,
): RunUsage | undefined {
  if (counted) return counted;
  const u = transition?.usage;
  if (!u) return undefined;
  return { tokensIn: u.tokens_in, tokensOut: u.tokens_out, costUsd: u.cost_usd, source: "overseer-agent" };
}
