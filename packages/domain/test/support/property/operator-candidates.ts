/**
 * Operator commands the property test may send in a state: the usual releases (answers,
 * decisions, starts, imports, missions), the rare ends (cancel, stop, settings changes), and
 * deliberately invalid commands that must be refused.
 */
import {
  APPROVE_PLAN_OPTION_ID,
  CUSTOM_OPTION_ID,
  type ProjectState,
  STOP_OPTION_ID,
} from "../../../src/index.ts";
import { planCard } from "../mission-builder.ts";
import { activeRuns } from "../state-builder.ts";
import { isTerminal } from "./invariant-support.ts";
import type { Candidate } from "./run-outcome-candidates.ts";

/** Operator commands that answer or release: the usual way out of awaiting_input and pauses. */
export function operatorReleases(state: ProjectState): Candidate[] {
  const out: Candidate[] = [];
  const by = "operator";
  for (const t of state.tasks.values()) {
    if (t.status === "done" || t.status === "cancelled") continue;
    if (t.status === "awaiting_input") {
      out.push({ command: { kind: "answer", taskId: t.id, text: "here is the answer", by }, expect: "ok" });
      if (t.kind === "resolver") {
        out.push({
          command: { kind: "release-external", taskId: t.id, reason: "done outside", by },
          expect: "ok",
        });
      }
    } else if (t.status === "blocked" || t.status === "in_progress") {
      out.push({
        command: { kind: "answer", taskId: t.id, text: "a hint for the next run", by },
        expect: "ok",
      });
    }
  }
  for (const d of state.decisions.values()) {
    if (d.status !== "pending") continue;
    const base = {
      kind: "resolve-decision" as const,
      decisionId: d.id,
      by,
      resolutionId: `res-${d.id}-${d.revision}`,
    };
    for (const option of d.options) {
      const note = option.requires_note ? "a note" : undefined;
      // A plan's approval is weighted up: the operator's import is a corner the sequences must reach.
      const weight = option.id === APPROVE_PLAN_OPTION_ID ? 3 : 1;
      for (let i = 0; i < weight; i++)
        out.push({ command: { ...base, optionId: option.id, note }, expect: "ok" });
    }
    out.push({ command: { ...base, optionId: CUSTOM_OPTION_ID, note: "free text" }, expect: "ok" });
    const offersStop = d.options.some((o) => o.id === STOP_OPTION_ID);
    out.push({ command: { ...base, optionId: STOP_OPTION_ID }, expect: offersStop ? "ok" : "error" });
  }
  if (state.project.status !== "active") {
    out.push({ command: { kind: "set-project-status", status: "active", by }, expect: "ok" });
  }
  // A new start (rule 12): fresh session budget, sometimes limited to one stage.
  out.push({ command: { kind: "start-project", by, stage: null, sessionsLimit: 6 }, expect: "ok" });
  out.push({ command: { kind: "start-project", by, stage: "S01", sessionsLimit: null }, expect: "ok" });
  // More work arrives: new cards, one depending on an existing task.
  const existing = [...state.tasks.keys()];
  const fresh = `S02-${state.tasks.size + 100}`;
  out.push({
    command: {
      kind: "import-tasks",
      by,
      tasks: [importedCard(fresh, existing.slice(0, 1)), importedCard(`${fresh}b`, [fresh])],
    },
    expect: "ok",
  });
  const planning = [...state.tasks.values()].some((t) => t.kind === "plan" && !isTerminal(t));
  out.push({
    command: {
      kind: "start-mission",
      objective: "Ship it",
      stage: null,
      sessionsLimit: 30,
      maxRounds: 2,
      by,
    },
    expect: planning ? "error" : "ok",
  });
  return out;
}

/** A card the operator imports in the generated runs. */
function importedCard(id: string, prerequisites: readonly string[]) {
  return planCard(id, prerequisites, {
    stage: "S02",
    title: `Imported ${id}`,
    body: "",
    role: "general",
    scope: ["src/imported/**"],
    priority: 1,
  });
}

/** Operator commands that end things (cancel, stop, stopping the project) and settings changes. Kept rare. */
export function operatorEnds(state: ProjectState): Candidate[] {
  const out: Candidate[] = [];
  const by = "operator";
  for (const t of state.tasks.values()) {
    if (t.status === "done" || t.status === "cancelled") continue;
    out.push({ command: { kind: "cancel", taskId: t.id, by, reason: "not needed" }, expect: "ok" });
    out.push({ command: { kind: "stop", taskId: t.id, by }, expect: "ok" });
  }
  if (state.project.status === "active") {
    out.push({ command: { kind: "set-project-status", status: "stopped", by }, expect: "ok" });
  }
  // Operator settings changes, kept rare like the ends so the other operator paths keep their
  // share. Never below the runs already active: lowering concurrency under them is allowed,
  // but (f) then holds only for new claims.
  const concurrency = Math.max(activeRuns(state).length, 1 + (state.tasks.size % 3));
  out.push({
    command: { kind: "update-project-config", by, patch: { concurrency, objective: "Ship the parser" } },
    expect: "ok",
  });
  out.push({
    command: { kind: "update-project-config", by, patch: { runnerConfig: { attempts: 2 }, budgetUsd: null } },
    expect: "ok",
  });
  return out;
}

/** Commands that must be refused (a DomainError), and redeliveries of resolved decisions. */
export function invalidCommands(state: ProjectState): Candidate[] {
  return [...invalidOperatorCommands(state), ...invalidRunOutcomes(state), ...invalidTaskCommands(state)];
}

function invalidOperatorCommands(state: ProjectState): Candidate[] {
  const out: Candidate[] = [];
  const by = "operator";
  out.push({
    command: { kind: "submit", runId: "run-unknown", message: "m", commitSha: null, branchHead: null },
    expect: "error",
  });
  out.push({ command: { kind: "cancel", taskId: "NOPE-1", by }, expect: "error" });
  out.push({
    command: {
      kind: "create-project",
      by,
      project: {
        id: state.project.id,
        name: "again",
        repo: "/srv/repo",
        branch: "main",
        repoKind: "bare",
        objective: "",
        runnerConfig: {},
        concurrency: 1,
        budgetUsd: null,
        status: "paused",
        continuous: false,
      },
    },
    expect: "error",
  });
  out.push({ command: { kind: "update-project-config", by, patch: { concurrency: 0 } }, expect: "error" });
  out.push({ command: { kind: "update-project-config", by, patch: { budgetUsd: -1 } }, expect: "error" });
  const someTask = [...state.tasks.keys()][0];
  if (someTask) {
    out.push({ command: { kind: "import-tasks", by, tasks: [importedCard(someTask, [])] }, expect: "error" });
  }
  out.push({
    command: { kind: "import-tasks", by, tasks: [importedCard("S03-new", ["NOPE-1"])] },
    expect: "error",
  });
  out.push({
    command: {
      kind: "start-mission",
      objective: " ",
      stage: null,
      sessionsLimit: null,
      maxRounds: 2,
      by: "operator",
    },
    expect: "error",
  });
  return out;
}

/** Transitions the run's action may not make. */
function invalidRunOutcomes(state: ProjectState): Candidate[] {
  const out: Candidate[] = [];
  for (const run of activeRuns(state)) {
    if (run.action !== "review" && state.tasks.get(run.taskId)?.kind !== "plan") {
      out.push({
        command: {
          kind: "propose",
          runId: run.id,
          proposal: { kind: "complete", evidence: "done" },
          commitSha: null,
          branchHead: null,
          maxAttempts: 3,
        },
        expect: "error",
      });
    }
    if (run.action === "review") {
      out.push({
        command: { kind: "submit", runId: run.id, message: "m", commitSha: null, branchHead: null },
        expect: "error",
      });
    } else {
      out.push({
        command: { kind: "approve", runId: run.id, landedSha: null, landedBranch: null },
        expect: "error",
      });
      out.push({ command: { kind: "reject", runId: run.id, feedback: "f" }, expect: "error" });
      out.push({
        command: {
          kind: "land-failed",
          runId: run.id,
          reason: "conflict",
          files: ["x"],
          details: "",
          branch: "main",
          maxAttempts: 3,
        },
        expect: "error",
      });
    }
  }
  return out;
}

/** Commands on tasks and cards in a state that refuses them (or redeliveries of a resolution). */
function invalidTaskCommands(state: ProjectState): Candidate[] {
  const out: Candidate[] = [];
  const by = "operator";
  for (const t of state.tasks.values()) {
    if (t.status === "done" || t.status === "cancelled") {
      out.push({ command: { kind: "cancel", taskId: t.id, by }, expect: "error" });
      out.push({ command: { kind: "stop", taskId: t.id, by }, expect: "error" });
      out.push({ command: { kind: "answer", taskId: t.id, text: "late", by }, expect: "error" });
    } else {
      out.push({ command: { kind: "answer", taskId: t.id, text: " ", by }, expect: "error" });
    }
    if (t.kind !== "resolver" || t.status !== "awaiting_input") {
      out.push({ command: { kind: "release-external", taskId: t.id, reason: "r", by }, expect: "error" });
    }
  }
  for (const d of state.decisions.values()) {
    const base = { kind: "resolve-decision" as const, decisionId: d.id, by, resolutionId: "res-late" };
    if (d.status === "pending") {
      out.push({ command: { ...base, optionId: "not-offered" }, expect: "error" });
      out.push({ command: { ...base, optionId: CUSTOM_OPTION_ID }, expect: "error" });
    } else {
      // Same option again: already_applied; another option: stale.
      out.push({ command: { ...base, optionId: d.selectedOption ?? "x", note: "again" }, expect: "ok" });
      const other = d.selectedOption === CUSTOM_OPTION_ID ? STOP_OPTION_ID : CUSTOM_OPTION_ID;
      out.push({ command: { ...base, optionId: other, note: "other" }, expect: "error" });
    }
  }
  return out;
}
