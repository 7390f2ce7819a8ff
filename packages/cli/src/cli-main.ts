import { ConflictError, NotFoundError } from "@overseer/db";
import { ConfigError } from "@overseer/input-errors";
import { CommandFailed, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from "./cli-errors.ts";
import { type CliIo, terminalSafeIo } from "./cli-io.ts";
import { type CliCommand, findCommand, helpText } from "./command-registry.ts";
import { doctorCommand } from "./commands/doctor-command.ts";
import { initCommand } from "./commands/init-command.ts";
import { intakeCommands } from "./commands/intake-commands.ts";
import { intakeUpdateCommands } from "./commands/intake-update-commands.ts";
import { mcpCommand } from "./commands/mcp-command.ts";
import { migrateCommand } from "./commands/migrate-command.ts";
import { missionStartCommand } from "./commands/mission-command.ts";
import { notifyCommands } from "./commands/notify-commands.ts";
import { operatorCommands } from "./commands/operator-commands.ts";
import { projectControlCommands } from "./commands/project-control-commands.ts";
import { startCommand } from "./commands/start-command.ts";
import { taskAddCommand, taskImportCommand, taskListCommand } from "./commands/task-commands.ts";
import { tokenCreateCommand } from "./commands/token-create-command.ts";
import { upCommand } from "./commands/up-command.ts";
import { workersCommands } from "./commands/workers-commands.ts";

export const COMMANDS: readonly CliCommand[] = [
  initCommand,
  doctorCommand,
  taskImportCommand,
  taskAddCommand,
  taskListCommand,
  startCommand,
  missionStartCommand,
  ...projectControlCommands,
  tokenCreateCommand,
  migrateCommand,
  upCommand,
  ...operatorCommands,
  ...notifyCommands,
  ...intakeCommands,
  ...intakeUpdateCommands,
  ...workersCommands,
  mcpCommand,
];

/** The Argus operator procedure's spellings `--status` and `--notify TEXT` as aliases (docs/argus-compatibility.md). */
function applyAliases(argv: string[]): string[] {
  if (argv[0] === "--status") return ["status", ...argv.slice(1)];
  if (argv[0] === "--notify") return ["notify", ...argv.slice(1)];
  return argv;
}

/** Runs one CLI invocation and returns its exit code (0 ok, 1 failure, 2 usage/config). */
export async function runCli(rawArgv: string[], terminal: CliIo): Promise<number> {
  // Every line a verb prints, its own and the server's strings, passes the one sanitizer.
  const io = terminalSafeIo(terminal);
  const argv = applyAliases(rawArgv);
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    io.out(helpText(COMMANDS));
    return argv.length === 0 ? EXIT_USAGE : EXIT_OK;
  }
  const found = findCommand(COMMANDS, argv);
  if (!found) {
    io.err(`Unknown command "${argv.join(" ")}". Run \`overseer --help\` for the list.`);
    return EXIT_USAGE;
  }
  if (found.rest.includes("--help") || found.rest.includes("-h")) {
    io.out(`Usage: ${found.command.usage}`);
    return EXIT_OK;
  }
  try {
    return await found.command.run(found.rest, io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof ConfigError) {
      io.err(error.message);
      return EXIT_USAGE;
    }
    if (error instanceof CommandFailed || error instanceof NotFoundError || error instanceof ConflictError) {
      io.err(error.message);
      return EXIT_FAILURE;
    }
    io.err(`overseer: ${(error as Error).message ?? String(error)}`);
    return EXIT_FAILURE;
  }
}
