export { CommandFailed, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from "./cli-errors.ts";
export type { CliIo } from "./cli-io.ts";
export { COMMANDS, runCli } from "./cli-main.ts";
