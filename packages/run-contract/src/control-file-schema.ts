import { describeReceived, formatZodIssues } from "@overseer/input-errors";
import { z } from "zod";

/**
 * The control file is how an agent ends its run: `overseer-agent <verb> …` writes exactly one
 * `transition.json` into `$OVERSEER_CONTROL_DIR` and the worker validates it with this schema.
 *
 * It is a versioned tagged union on `kind`. Version 1 objects are strict: an unknown key is an
 * error rather than silently ignored, so a typo in a hand-written file (`feedbak`) is reported
 * to the operator instead of losing the reviewer's words. A future format bumps `version`.
 *
 * The same schema carries the agent's transition from the worker to the coordinator inside
 * a run result (`run-job-schema.ts`): its output is itself a valid control file (parsing it
 * again gives the same value), so the run contract is spelled once, here.
 *
 * Text limits are counted in UTF-8 bytes, the same unit `packages/harness/bin/overseer-agent` checks (it runs
 * awk in the C locale), so the command and the schema never disagree about what fits.
 */

/** Name of the single file a run's control dir may contain. */
export const TRANSITION_FILE_NAME = "transition.json";

/** Size limits of control file fields, in UTF-8 bytes unless stated otherwise. */
export const CONTROL_LIMITS = {
  /** Commit message of a submit (git keeps it verbatim): 64 KiB. */
  messageBytes: 64 * 1024,
  /** One-line summary of a submit: 4 KiB. */
  summaryBytes: 4 * 1024,
  /** Reviewer feedback (approve/reject): 64 KiB. */
  feedbackBytes: 64 * 1024,
  /** Reason of an escalation: 16 KiB. */
  reasonBytes: 16 * 1024,
  /** Question put to the operator: 4 KiB. */
  questionBytes: 4 * 1024,
  /** Decision option count (Argus decision cards allow at most 8). */
  maxOptions: 8,
  /** Decision option ids are cut to this many characters after normalisation. */
  optionIdChars: 64,
  /** Decision option label: 256 bytes. */
  optionLabelBytes: 256,
  /** Decision option description: 2 KiB. */
  optionDescriptionBytes: 2 * 1024,
  /** A planner's task graph file (`overseer-agent plan --file`): 256 KiB. */
  planBytes: 256 * 1024,
  /** A planner's completion evidence (`overseer-agent complete --evidence`): 64 KiB. */
  evidenceBytes: 64 * 1024,
} as const;

/**
 * Categories of an escalation that needs the user (docs/state-machine.md rule 7). Each is one of
 * the domain's awaiting reasons: the coordinator hands the category to the domain as one, so the
 * compiler keeps the two lists in step there.
 */
export const ESCALATION_CATEGORIES = [
  "credentials",
  "payment",
  "product_question",
  "external_admin",
  "other",
] as const;
export type EscalationCategory = (typeof ESCALATION_CATEGORIES)[number];

export const CONTROL_KINDS = ["submit", "approve", "reject", "escalate", "plan", "complete"] as const;
export type ControlKind = (typeof CONTROL_KINDS)[number];

function utf8Bytes(value: string): number {
  return Buffer.byteLength(value, "utf8");
}

/** A string bounded in UTF-8 bytes; `required` also refuses empty and whitespace-only text. */
function boundedText(maxBytes: number, required: boolean) {
  let schema = z.string().check(
    z.refine((s) => utf8Bytes(s) <= maxBytes, {
      error: (issue) =>
        `expected at most ${maxBytes} bytes (UTF-8), received ${utf8Bytes(String(issue.input))} bytes`,
    }),
  );
  if (required) {
    schema = schema.check(
      z.refine((s) => s.trim().length > 0, { error: "expected non-empty text, received an empty string" }),
    );
  }
  return schema;
}

/**
 * Normalises a decision option id to `[a-z0-9_-]` exactly like the domain's decision cards:
 * trimmed, lower case, every run of other characters becomes `_`, leading/trailing `_`
 * removed, at most 64 characters; nothing left → `"option"`. `"Use Stripe!"` → `"use_stripe"`.
 */
export function normalizeOptionId(raw: string): string {
  const id = raw
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .slice(0, CONTROL_LIMITS.optionIdChars);
  return id || "option";
}

export const UsageSchema = z.strictObject({
  tokens_in: z.number().int().nonnegative().optional(),
  tokens_out: z.number().int().nonnegative().optional(),
  cost_usd: z.number().nonnegative().optional(),
});
export type Usage = z.infer<typeof UsageSchema>;

const DecisionOptionSchema = z
  .strictObject({
    id: boundedText(256, false),
    label: boundedText(CONTROL_LIMITS.optionLabelBytes, true),
    description: boundedText(CONTROL_LIMITS.optionDescriptionBytes, false).optional(),
    requires_note: z.boolean().optional(),
  })
  .transform((option) => {
    const id = normalizeOptionId(option.id);
    return {
      id,
      label: option.label,
      ...(option.description !== undefined ? { description: option.description } : {}),
      // Option id `custom` always means "free-text answer in the note" (docs/state-machine.md).
      requires_note: id === "custom" ? true : (option.requires_note ?? false),
    };
  });
export type DecisionOption = z.output<typeof DecisionOptionSchema>;

const SubmitSchema = z.strictObject({
  version: z.literal(1),
  kind: z.literal("submit"),
  message: boundedText(CONTROL_LIMITS.messageBytes, true),
  summary: boundedText(CONTROL_LIMITS.summaryBytes, false).optional(),
  usage: UsageSchema.optional(),
});

const ApproveSchema = z.strictObject({
  version: z.literal(1),
  kind: z.literal("approve"),
  feedback: boundedText(CONTROL_LIMITS.feedbackBytes, false).optional(),
  usage: UsageSchema.optional(),
});

const RejectSchema = z.strictObject({
  version: z.literal(1),
  kind: z.literal("reject"),
  feedback: boundedText(CONTROL_LIMITS.feedbackBytes, true),
  usage: UsageSchema.optional(),
});

/** A mission planner's task graph: the text of a YAML or JSON task file, validated by the coordinator. */
const PlanSchema = z.strictObject({
  version: z.literal(1),
  kind: z.literal("plan"),
  plan: boundedText(CONTROL_LIMITS.planBytes, true),
  summary: boundedText(CONTROL_LIMITS.summaryBytes, false).optional(),
  usage: UsageSchema.optional(),
});

/** A mission planner's declaration that the objective is met, with the evidence for its reviewer. */
const CompleteSchema = z.strictObject({
  version: z.literal(1),
  kind: z.literal("complete"),
  evidence: boundedText(CONTROL_LIMITS.evidenceBytes, true),
  usage: UsageSchema.optional(),
});

const EscalateSchema = z
  .strictObject({
    version: z.literal(1),
    kind: z.literal("escalate"),
    reason: boundedText(CONTROL_LIMITS.reasonBytes, true),
    needs_user: z.boolean().optional(),
    category: z.enum(ESCALATION_CATEGORIES).optional(),
    question: boundedText(CONTROL_LIMITS.questionBytes, true).optional(),
    options: z.array(DecisionOptionSchema).max(CONTROL_LIMITS.maxOptions).optional(),
    /** Ask the mission for a new planning round instead of a resolver. */
    replan: z.boolean().optional(),
    usage: UsageSchema.optional(),
  })
  .transform((value, ctx) => {
    const needsUser = value.needs_user ?? false;
    const options = value.options ?? [];
    if (needsUser && value.question === undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["question"],
        message: "expected a question for the operator because needs_user is true, received nothing",
      });
    }
    if (!needsUser && (value.question !== undefined || options.length > 0)) {
      ctx.addIssue({
        code: "custom",
        path: ["needs_user"],
        message: "expected needs_user: true because question/options are set, received false/absent",
      });
    }
    // Ids that collide after normalisation keep the first option, as decision cards do: a
    // near-duplicate option is not worth failing the whole run over.
    const seen = new Set<string>();
    const unique: DecisionOption[] = [];
    for (const option of options) {
      if (seen.has(option.id)) continue;
      seen.add(option.id);
      unique.push(option);
    }
    return {
      version: value.version,
      kind: value.kind,
      reason: value.reason,
      needs_user: needsUser,
      ...(value.category !== undefined ? { category: value.category } : {}),
      ...(value.question !== undefined ? { question: value.question } : {}),
      options: unique,
      ...(value.replan ? { replan: true as const } : {}),
      ...(value.usage !== undefined ? { usage: value.usage } : {}),
    };
  });

/** Every valid control file, version 1. Output types carry normalised option ids and defaults. */
export const ControlTransitionSchema = z.discriminatedUnion("kind", [
  SubmitSchema,
  ApproveSchema,
  RejectSchema,
  EscalateSchema,
  PlanSchema,
  CompleteSchema,
]);

export type ControlTransition = z.output<typeof ControlTransitionSchema>;
export type SubmitTransition = Extract<ControlTransition, { kind: "submit" }>;
export type ApproveTransition = Extract<ControlTransition, { kind: "approve" }>;
export type RejectTransition = Extract<ControlTransition, { kind: "reject" }>;
export type EscalateTransition = Extract<ControlTransition, { kind: "escalate" }>;
export type PlanTransition = Extract<ControlTransition, { kind: "plan" }>;
export type CompleteTransition = Extract<ControlTransition, { kind: "complete" }>;

export type ControlParseResult = { ok: true; transition: ControlTransition } | { ok: false; error: string };

/**
 * Validates an already-decoded JSON value. Errors name each field, what was expected and
 * what was received; `version` and `kind` are checked first so a wrong tag gives one clear
 * line instead of four union branches' worth of noise.
 */
export function parseControlTransition(value: unknown): ControlParseResult {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, error: `expected a JSON object, received ${describeReceived(value)}` };
  }
  const record = value as Record<string, unknown>;
  if (record.version !== 1) {
    return {
      ok: false,
      error: `version: expected 1, received ${describeReceived(record.version)} (write the file with the bundled overseer-agent command)`,
    };
  }
  if (!CONTROL_KINDS.includes(record.kind as ControlKind)) {
    return {
      ok: false,
      error: `kind: expected one of ${CONTROL_KINDS.join("|")}, received ${describeReceived(record.kind)}`,
    };
  }
  const parsed = ControlTransitionSchema.safeParse(value);
  if (parsed.success) return { ok: true, transition: parsed.data };
  return { ok: false, error: formatZodIssues(parsed.error.issues, value) };
}
