/**
 * "Needs you" decision card, in the Argus shape so its clients work unchanged (docs/argus-compatibility.md).
 * One card per task (`decision-<task>`); `revision` grows each time the card is re-asked.
 */
export interface DecisionOption {
  readonly id: string;
  readonly label: string;
  readonly description: string;
  readonly requires_note: boolean;
}

export interface DecisionEvidence {
  readonly label: string;
  readonly path: string;
  readonly summary: string;
}

export interface Decision {
  readonly id: string;
  readonly projectId: string;
  readonly itemId: string;
  readonly revision: number;
  readonly status: "pending" | "resolved";
  readonly title: string;
  readonly reason: string;
  readonly question: string;
  readonly evidence: readonly DecisionEvidence[];
  readonly options: readonly DecisionOption[];
  readonly optionsSource: "agent" | "none";
  readonly selectedOption: string | null;
  readonly note: string | null;
  readonly resolutionId: string | null;
  readonly resolvedBy: string | null;
  readonly createdAt: number;
  readonly resolvedAt: number | null;
}

export const MAX_DECISION_OPTIONS = 8;
/** Free-text answer in the note; always accepted, note required. */
export const CUSTOM_OPTION_ID = "custom";
/** docs/state-machine.md rule 12: cancel the item, keep its work, turn `continuous` off. */
export const STOP_OPTION_ID = "stop";

export function decisionIdFor(taskId: string): string {
  return `decision-${taskId}`;
}

/** Option ids are normalised to `[a-z0-9_-]`. */
export function normaliseOptionId(raw: string): string {
  const id = raw
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, 64);
  return id || "option";
}

export interface OptionInput {
  id: string;
  label?: string | undefined;
  description?: string | undefined;
  requires_note?: boolean | undefined;
}

/** Normalises ids, drops duplicates, keeps at most 8; `custom` always requires a note. */
export function normaliseOptions(inputs: readonly OptionInput[]): DecisionOption[] {
  const seen = new Set<string>();
  const out: DecisionOption[] = [];
  for (const input of inputs) {
    const id = normaliseOptionId(input.id);
    if (seen.has(id)) continue;
    seen.add(id);
    out.push({
      id,
      label: input.label?.trim() || input.id,
      description: input.description ?? "",
      requires_note: id === CUSTOM_OPTION_ID ? true : (input.requires_note ?? false),
    });
    if (out.length === MAX_DECISION_OPTIONS) break;
  }
  return out;
}

/** Options offered on cards the system raises itself (limits, scope, configuration). */
export const SYSTEM_OPTIONS: readonly DecisionOption[] = [
  { id: "continue", label: "Continue", description: "Make the task runnable again.", requires_note: false },
  {
    id: CUSTOM_OPTION_ID,
    label: "Answer in a note",
    description: "Free-text instructions for the next run.",
    requires_note: true,
  },
  {
    id: STOP_OPTION_ID,
    label: "Stop",
    description: "Cancel this item, keep its work, turn continuous off.",
    requires_note: false,
  },
];
