import type { Command, CommandKind } from "../command.ts";
import type { ApplyResult } from "./apply-result.ts";
import type { Draft } from "./draft.ts";

/** The command of one kind. */
export type CommandOf<K extends CommandKind> = Extract<Command, { kind: K }>;

/** Applies one kind of command to the draft and returns the result (or `draft.alreadyApplied()`). */
export type Handler<K extends CommandKind> = (draft: Draft, command: CommandOf<K>) => ApplyResult;
