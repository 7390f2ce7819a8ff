/**
 * Escalation and resolvers (rules 4–6): a run that cannot go on blocks its task, and a
 * resolver task is created for the blocker (awaiting_input beyond the limits or when the
 * agent needs the user). A done resolver unblocks its original (run-outcome-transitions.ts).
 */
import type { OptionCommandInput } from "../command.ts";
import { normaliseOptions } from "../decision.ts";
import type { Run } from "../run.ts";
import { type AwaitingReason, newTask, type Task } from "../task.ts";
import type { ApplyResult } from "./apply-result.ts";
import { awaitInput } from "./decision-cards.ts";
import type { Draft } from "./draft.ts";
import type { CommandOf } from "./handler.ts";
import { missionOpen, replan } from "./mission-rounds.ts";
import { oneLine } from "./text-format.ts";

/** Rule 6: a resolver deeper than this is created awaiting_input. */
export const MAX_RESOLVER_DEPTH = 3;
/** Rule 6: the 7th remediation under one root task is created awaiting_input. */
export const MAX_REMEDIATIONS_PER_ROOT = 6;

/** The agent escalated: its task blocks behind a resolver, or (`--replan`) a planning round replaces it. */
export function escalate(draft: Draft, command: CommandOf<"escalate">): ApplyResult {
  const { run, task } = draft.outcomeTarget(command.runId, ["in_progress", "review"]) ?? {};
  if (!run || !task) return draft.alreadyApplied();
  draft.endRun(run, { status: "finished", transition: "escalate" }, command.usage);
  draft.event("task.escalated", run, {
    reason: command.reason,
    checkpointRef: command.checkpointRef ?? null,
  });
  // Only ordinary work is replanned; a resolver or planning task escalates as usual.
  if (command.replan && task.kind === "work" && missionOpen(draft.project)) {
    replan(draft, task, run, command.reason);
    return draft.result("applied");
  }
  escalateTask(draft, task, run, {
    reason: command.reason,
    needsUser: command.needsUser ?? false,
    category: command.category,
    question: command.question,
    options: command.options,
  });
  return draft.result("applied");
}

interface EscalateOptions {
  reason: string;
  needsUser?: boolean;
  category?: AwaitingReason | undefined;
  question?: string | undefined;
  options?: readonly OptionCommandInput[] | undefined;
  /** Create the resolver awaiting_input with this reason regardless of limits. */
  forceAwaiting?: AwaitingReason;
}

/**
 * Rules 4–6: the task becomes `blocked` and a resolver is created `todo` with the
 * original's scope and prerequisites (not depending on the original); beyond the depth or
 * remediation limits, or when the agent needs the user, the resolver is created
 * `awaiting_input` with a decision card instead.
 */
export function escalateTask(draft: Draft, task: Task, run: Run, options: EscalateOptions): void {
  const rootId = task.rootId ?? task.id;
  const depth = task.depth + 1;
  let remediations = 0;
  for (const t of draft.tasks.values()) if (t.kind === "resolver" && t.rootId === rootId) remediations++;
  const overLimit = depth > MAX_RESOLVER_DEPTH || remediations >= MAX_REMEDIATIONS_PER_ROOT;

  const resolverId = draft.freshTaskId(`${task.id}.R`);
  const returnTo = run.action === "review" ? "review" : "todo";
  draft.putTask({
    ...task,
    status: "blocked",
    statusReason: options.reason,
    blockedBy: resolverId,
    returnTo,
    retiredAgentIds: [...task.retiredAgentIds, run.agentId],
    // The run ended with a transition (or became a remediation): the count of consecutive
    // failed runs starts over, so the task gets its full retry budget once unblocked (rule 9).
    failures: 0,
    notBefore: null,
  });
  draft.event("task.blocked", run, { resolverId, reason: options.reason });

  const resolver = newTask({
    projectId: task.projectId,
    id: resolverId,
    stage: task.stage,
    title: `Resolve blocker of ${task.id}: ${oneLine(options.reason, 80)}`,
    body: [
      `The ${run.action} run ${run.agentId} of task ${task.id} ("${task.title}") was blocked.`,
      "",
      "Blocker:",
      options.reason,
      "",
      `Remove this blocker within the scope below so that ${task.id} can continue. Do not do ${task.id}'s own work.`,
    ].join("\n"),
    role: task.role,
    scope: task.scope,
    prerequisites: task.prerequisites,
    acceptance: [`The blocker of ${task.id} described above no longer stands.`],
    priority: task.priority,
    kind: "resolver",
    parentId: task.id,
    rootId,
    depth,
  });
  draft.addTask(resolver);
  draft.event(
    "resolver.created",
    { taskId: resolverId, id: run.id },
    {
      parentId: task.id,
      rootId,
      depth,
      remediation: remediations + 1,
    },
  );

  const awaiting: AwaitingReason | null = overLimit
    ? "blocker_limit"
    : (options.forceAwaiting ?? (options.needsUser ? (options.category ?? "product_question") : null));
  if (awaiting === null) return;
  const agentOptions = options.needsUser && !overLimit ? normaliseOptions(options.options ?? []) : [];
  const limitText = overLimit
    ? depth > MAX_RESOLVER_DEPTH
      ? `Resolver depth ${depth} exceeds ${MAX_RESOLVER_DEPTH}.`
      : `This would be remediation ${remediations + 1} under ${rootId} (limit ${MAX_REMEDIATIONS_PER_ROOT}).`
    : null;
  awaitInput(draft, draft.task(resolverId), "todo", awaiting, {
    title: limitText ? `Blocker limit reached under ${rootId}` : `Needs you: ${oneLine(options.reason, 80)}`,
    reason: limitText ? `${limitText} ${options.reason}` : options.reason,
    question: options.question ?? (limitText ? `Should ${resolverId} run anyway?` : options.reason),
    options: agentOptions.length > 0 ? agentOptions : undefined,
  });
}
