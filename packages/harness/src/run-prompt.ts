import {
  type MissionState,
  openPullRequest,
  type ProjectState,
  type RunAction,
  type Task,
} from "@overseer/domain";
import type { RunnerConfig } from "@overseer/project-config";
import type { MissionPromptContext } from "./mission-prompt.ts";
import { type PromptRenderResult, renderPrompt } from "./prompt-renderer.ts";

/** What Postgres knows of a mission so far (loaded by the db package, shown to the planner). */
export type MissionPromptEvidence = Pick<
  MissionPromptContext,
  "doneTasks" | "cancelledTasks" | "openIncidents"
>;

/**
 * The full, fresh prompt of a run (docs/runner-config.md): master prompt, role notes, task card, action
 * instructions, prior feedback or handoff, operator answers, bounded by max_prompt_chars.
 * Shared by real runs and `overseer start --dry-run`, so a dry run shows the real size.
 */
export function renderRunPrompt(
  /** `landingBranch`: where approved work lands (domain `landingBranch`), the base of reviews and merges. */
  project: { id: string; objective: string; landingBranch: string },
  config: RunnerConfig,
  state: ProjectState,
  task: Task,
  action: RunAction,
  agentId: string,
  actionRunNumber: number,
  evidence: MissionPromptEvidence | null = null,
): PromptRenderResult {
  const parent = task.parentId ? state.tasks.get(task.parentId) : undefined;
  const mission = state.project.mission;
  // pull_request mode: `landingBranch` is then the base the task's pull request targets.
  const openPr = openPullRequest(task.pullRequest);
  return renderPrompt({
    project: { id: project.id, objective: project.objective, masterPrompt: config.master_prompt },
    roleNotes: config.role_notes[task.role],
    task: {
      id: task.id,
      stage: task.stage,
      title: task.title,
      body: task.body,
      role: task.role,
      scope: [...task.scope],
      acceptance: [...task.acceptance],
      kind: task.kind,
      parentId: task.parentId,
    },
    action,
    agentId,
    feedback: task.feedback,
    parentContext: parent ? { id: parent.id, title: parent.title, reason: parent.statusReason ?? "" } : null,
    answers: task.answers.map((a) => ({ question: a.question, answer: a.answer })),
    maxChars: config.max_prompt_chars,
    reviewBase: action === "review" ? project.landingBranch : undefined,
    attempt: actionRunNumber,
    landing:
      action !== "review" && task.landing !== null
        ? {
            reason: task.landing.reason,
            files: [...task.landing.files],
            branch: project.landingBranch,
            pullRequest: openPr ? { number: openPr.number, url: openPr.url } : null,
          }
        : null,
    mission: mission && mission.evidence === null ? missionPromptContext(mission, task, evidence) : null,
  });
}

function missionPromptContext(
  mission: MissionState,
  task: Task,
  evidence: MissionPromptEvidence | null,
): MissionPromptContext {
  return {
    objective: mission.objective,
    stage: mission.stage,
    round: mission.round,
    maxRounds: mission.maxRounds,
    doneTasks: evidence?.doneTasks ?? [],
    cancelledTasks: evidence?.cancelledTasks ?? [],
    openIncidents: evidence?.openIncidents ?? [],
    proposal: task.proposal as MissionPromptContext["proposal"],
  };
}
