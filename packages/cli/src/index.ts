export { runCli, COMMANDS } from "./cli-main.ts";
export type { CliIo } from "./cli-io.ts";
export { EXIT_OK, EXIT_FAILURE, EXIT_USAGE, UsageError, CommandFailed } from "./cli-errors.ts";
