import { type ParseArgsConfig, parseArgs } from "node:util";
import { UsageError } from "./cli-errors.ts";

type Options = NonNullable<ParseArgsConfig["options"]>;

/** node:util parseArgs with usage errors that name the command's usage line. */
export function parseCommandArgs<O extends Options>(
  args: string[],
  options: O,
  usage: string,
  allowPositionals = true,
) {
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\nUsage: ${usage}`);
  }
}

export function requirePositive(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0)
    throw new UsageError(`${flag} expects a positive integer, received "${value}"`);
  return n;
}

/**
 * The one positional argument a verb takes. None or several, or a required flag missing
 * (`requiredFlagGiven: false`), is a usage error that says `message` and the usage line.
 */
export function onePositional(
  positionals: readonly string[],
  message: string,
  usage: string,
  { requiredFlagGiven = true }: { requiredFlagGiven?: boolean } = {},
): string {
  const [only] = positionals;
  if (positionals.length !== 1 || only === undefined || !requiredFlagGiven)
    throw new UsageError(`${message}\nUsage: ${usage}`);
  return only;
}

/**
 * The one positional argument of a verb on a row (a delivery, a tracker update): its id, a
 * positive integer. Missing, several or not an integer is a usage error naming `what` and
 * where to find ids (`listHint`, a command).
 */
export function oneRowId(
  positionals: readonly string[],
  what: string,
  listHint: string,
  usage: string,
): string {
  const id = onePositional(positionals, `Give one ${what} id (see ${listHint}).`, usage);
  if (!/^[1-9][0-9]*$/.test(id))
    throw new UsageError(`A ${what} id is an integer, received "${id}".\nUsage: ${usage}`);
  return id;
}
