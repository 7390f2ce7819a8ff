/**
 * Draft: the copy-on-write working state of one command. Handlers read and change it; it
 * records what changed (tasks, runs, cards, the project row), the events and the incidents,
 * and `result()` turns that into the ApplyResult the caller persists. The loaded state is
 * never mutated, so a refused command leaves nothing behind.
 */
import type { Usage } from "../command.ts";
import type { Decision } from "../decision.ts";
import { DomainError } from "../domain-error.ts";
import type { DomainEvent, DomainEventType, Incident } from "../domain-event.ts";
import type { MissionBound } from "../mission.ts";
import type { NewProject, ProjectSettingsPatch } from "../project-settings.ts";
import type { DomainContext, ProjectControl, ProjectState } from "../project-state.ts";
import { formatAgentId, isActiveRun, type Run, type RunAction } from "../run.ts";
import type { Task } from "../task.ts";
import type { ApplyResult, Changes } from "./apply-result.ts";

export class Draft {
  readonly tasks: Map<string, Task>;
  readonly runs: Map<string, Run>;
  readonly decisions: Map<string, Decision>;
  project: ProjectControl;
  createdProject: NewProject | null = null;
  settings: ProjectSettingsPatch | null = null;
  resolution: ApplyResult["resolution"] = null;
  private readonly changedTasks = new Set<string>();
  private readonly createdTasks = new Set<string>();
  private readonly changedRuns = new Set<string>();
  private readonly createdRuns = new Set<string>();
  private readonly changedDecisions = new Set<string>();
  private readonly createdDecisions = new Set<string>();
  private readonly events: DomainEvent[] = [];
  private readonly incidents: Incident[] = [];

  constructor(
    private readonly initial: ProjectState,
    readonly ctx: DomainContext,
  ) {
    this.tasks = new Map(initial.tasks);
    this.runs = new Map(initial.runs);
    this.decisions = new Map(initial.decisions);
    this.project = initial.project;
  }

  task(id: string): Task {
    const task = this.tasks.get(id);
    if (!task) throw new DomainError("not_found", `Task ${id} does not exist in project ${this.project.id}.`);
    return task;
  }

  /** The run if it is still active; undefined if it already ended (redelivery); throws if unknown. */
  activeRun(runId: string): Run | undefined {
    const run = this.runs.get(runId);
    if (!run) throw new DomainError("not_found", `Run ${runId} is unknown to project ${this.project.id}.`);
    return isActiveRun(run) ? run : undefined;
  }

  /** Run and task for a run outcome; undefined when the outcome was already applied. */
  outcomeTarget(
    runId: string,
    taskStatuses: readonly Task["status"][],
  ): { run: Run; task: Task } | undefined {
    const run = this.activeRun(runId);
    if (!run) return undefined;
    const task = this.task(run.taskId);
    if (!taskStatuses.includes(task.status)) {
      throw new DomainError(
        "invalid_transition",
        `Task ${task.id} is ${task.status}; a ${run.action} run's outcome needs it in ${taskStatuses.join(" or ")}.`,
        { status: task.status },
      );
    }
    return { run, task };
  }

  /** Stores a changed task. */
  putTask(task: Task): void {
    this.tasks.set(task.id, task);
    this.changedTasks.add(task.id);
  }

  /** Stores a task the command creates (inserted rather than updated). */
  addTask(task: Task): void {
    this.putTask(task);
    this.createdTasks.add(task.id);
  }

  /** Stores a changed run. */
  putRun(run: Run): void {
    this.runs.set(run.id, run);
    this.changedRuns.add(run.id);
  }

  /** Stores a run the command creates. */
  addRun(run: Run): void {
    this.putRun(run);
    this.createdRuns.add(run.id);
  }

  putDecision(decision: Decision, created = false): void {
    this.decisions.set(decision.id, decision);
    this.changedDecisions.add(decision.id);
    if (created) this.createdDecisions.add(decision.id);
  }

  endRun(
    run: Run,
    end: Pick<Run, "status"> & Partial<Pick<Run, "transition" | "failure">>,
    usage?: Usage,
  ): void {
    this.putRun({ ...run, ...end });
    this.event(end.status === "finished" ? "run.finished" : "run.failed", run, {
      transition: end.transition ?? null,
      failure: end.failure ?? null,
      usage: usage ?? null,
    });
  }

  resolveCard(
    decision: Decision,
    optionId: string,
    note: string | null,
    by: string,
    resolutionId: string,
  ): void {
    this.putDecision({
      ...decision,
      status: "resolved",
      selectedOption: optionId,
      note,
      resolutionId,
      resolvedBy: by,
      resolvedAt: this.ctx.now,
    });
    this.event(
      "decision.resolved",
      { taskId: decision.itemId, id: null },
      {
        decisionId: decision.id,
        optionId,
        resolutionId,
        by,
      },
    );
  }

  /** `bound`: a pause because a bound was reached (budget, sessions, rounds), kept on the event. */
  setProjectStatus(
    status: ProjectControl["status"],
    reason: string | null,
    by?: string,
    bound?: MissionBound,
  ): void {
    if (this.project.status === status) return;
    this.project = { ...this.project, status, statusReason: reason };
    this.event(
      "project.status_changed",
      { taskId: null, id: null },
      { status, reason, ...(by !== undefined ? { by } : {}), ...(bound !== undefined ? { bound } : {}) },
    );
  }

  event(
    type: DomainEventType,
    subject: { taskId: string | null; id: string | null },
    data: Record<string, unknown>,
  ): void {
    this.events.push({ type, taskId: subject.taskId, runId: subject.id, data });
  }

  incident(
    kind: Incident["kind"],
    task: Task,
    run: Run | null,
    message: string,
    details: Record<string, unknown>,
  ): void {
    this.incidents.push({ kind, taskId: task.id, runId: run?.id ?? null, message, details });
    this.event("incident.recorded", { taskId: task.id, id: run?.id ?? null }, { kind, message });
  }

  /** A fresh agent id: never an active run's, never a retired one, never the task's executor. */
  mintAgentId(action: RunAction, task: Task): string {
    const taken = new Set<string>([
      ...task.retiredAgentIds,
      ...(task.executorAgentId ? [task.executorAgentId] : []),
    ]);
    for (const run of this.runs.values()) taken.add(run.agentId);
    for (;;) {
      const id = formatAgentId(action, task.role, this.ctx.randomHex());
      if (!taken.has(id)) return id;
    }
  }

  freshTaskId(prefix: string): string {
    for (let n = 1; ; n++) if (!this.tasks.has(`${prefix}${n}`)) return `${prefix}${n}`;
  }

  snapshot(): ProjectState {
    return { project: this.project, tasks: this.tasks, runs: this.runs, decisions: this.decisions };
  }

  alreadyApplied(): ApplyResult {
    return {
      outcome: "already_applied",
      state: this.initial,
      changes: emptyChanges(),
      events: [],
      incidents: [],
      resolution: this.resolution,
    };
  }

  result(outcome: ApplyResult["outcome"]): ApplyResult {
    const pick = <T>(map: Map<string, T>, ids: Set<string>): T[] => [...ids].map((id) => map.get(id) as T);
    return {
      outcome,
      state: this.snapshot(),
      changes: {
        project: this.project === this.initial.project ? null : this.project,
        createdProject: this.createdProject,
        settings: this.settings,
        tasks: pick(this.tasks, this.changedTasks),
        createdTaskIds: this.createdTasks,
        runs: pick(this.runs, this.changedRuns),
        createdRunIds: this.createdRuns,
        decisions: pick(this.decisions, this.changedDecisions),
        createdDecisionIds: this.createdDecisions,
      },
      events: this.events,
      incidents: this.incidents,
      resolution: this.resolution,
    };
  }
}

function emptyChanges(): Changes {
  return {
    project: null,
    createdProject: null,
    settings: null,
    tasks: [],
    createdTaskIds: new Set(),
    runs: [],
    createdRunIds: new Set(),
    decisions: [],
    createdDecisionIds: new Set(),
  };
}
