import { resolve } from "node:path";
import { formatProblems, loadTaskFile, validateTaskList } from "@overseer/config";
import { existingTaskIds, listTasks } from "@overseer/db";
import { TASK_STATUSES } from "@overseer/domain";
import { importTasks, TransitionApplier } from "@overseer/transitions";
import { onePositional, parseCommandArgs, requirePositive } from "../arg-parser.ts";
import { withDatabase } from "../cli-context.ts";
import { EXIT_OK, EXIT_USAGE, UsageError } from "../cli-errors.ts";
import { formatTable } from "../cli-io.ts";
import type { CliCommand } from "../command-registry.ts";
import { selectProject } from "./project-selector.ts";

const importUsage = "overseer task import FILE [--project P]";

/** Imports a YAML/JSON task graph: every problem reported at once, nothing imported unless all is valid. */
export const taskImportCommand: CliCommand = {
  path: ["task", "import"],
  summary: "import a task graph from YAML or JSON (all or nothing)",
  usage: importUsage,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(args, { project: { type: "string" } }, importUsage);
    const file = resolve(io.cwd, onePositional(positionals, "Give exactly one task file.", importUsage));
    return withDatabase(io, { migrate: true }, async ({ db }) => {
      const projectId = await selectProject(db, values.project);
      const result = await loadTaskFile(file, { existingIds: await existingTaskIds(db, projectId) });
      if (!result.ok) {
        io.err(formatProblems(result.problems));
        io.err(`Nothing was imported into ${projectId}.`);
        return EXIT_USAGE;
      }
      const n = await importTasks(new TransitionApplier({ db }), projectId, result.tasks, "cli");
      io.out(`imported ${n} task(s) into ${projectId}`);
      return EXIT_OK;
    });
  },
};

const addUsage =
  "overseer task add --id ID --title TEXT [--project P] [--body TEXT] [--role R] [--stage S] [--scope GLOB]... [--after ID]... [--acceptance TEXT]... [--priority N]";

export const taskAddCommand: CliCommand = {
  path: ["task", "add"],
  summary: "add one task card",
  usage: addUsage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      {
        project: { type: "string" },
        id: { type: "string" },
        title: { type: "string" },
        body: { type: "string" },
        role: { type: "string" },
        stage: { type: "string" },
        scope: { type: "string", multiple: true },
        after: { type: "string", multiple: true },
        acceptance: { type: "string", multiple: true },
        priority: { type: "string" },
      },
      addUsage,
      false,
    );
    if (!values.id || !values.title)
      throw new UsageError(`--id and --title are required.\nUsage: ${addUsage}`);
    const priority = values.priority === undefined ? undefined : Number(values.priority);
    if (priority !== undefined && !Number.isInteger(priority))
      throw new UsageError(`--priority expects an integer, received "${values.priority}"`);
    return withDatabase(io, { migrate: true }, async ({ db }) => {
      const projectId = await selectProject(db, values.project);
      const result = validateTaskList(
        [
          {
            id: values.id,
            title: values.title,
            body: values.body,
            role: values.role,
            stage: values.stage,
            scope: values.scope,
            prerequisites: values.after,
            acceptance: values.acceptance,
            priority,
          },
        ],
        "command line",
        { existingIds: await existingTaskIds(db, projectId) },
      );
      if (!result.ok) {
        io.err(formatProblems(result.problems));
        return EXIT_USAGE;
      }
      await importTasks(new TransitionApplier({ db }), projectId, result.tasks, "cli");
      io.out(`added ${values.id} to ${projectId}`);
      return EXIT_OK;
    });
  },
};

const listUsage = "overseer task list [--project P] [--status S]... [--json] [--limit N]";

export const taskListCommand: CliCommand = {
  path: ["task", "list"],
  summary: "list tasks (filter by status; --json for scripts)",
  usage: listUsage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      {
        project: { type: "string" },
        status: { type: "string", multiple: true },
        json: { type: "boolean" },
        limit: { type: "string" },
      },
      listUsage,
      false,
    );
    for (const s of values.status ?? []) {
      if (!(TASK_STATUSES as readonly string[]).includes(s)) {
        throw new UsageError(`--status must be one of ${TASK_STATUSES.join(", ")}; received "${s}"`);
      }
    }
    const limit = requirePositive(values.limit, "--limit") ?? 1000;
    return withDatabase(io, {}, async ({ db }) => {
      const projectId = await selectProject(db, values.project);
      const { tasks } = await listTasks(db, projectId, { status: values.status, limit });
      if (values.json) {
        io.out(JSON.stringify(tasks, null, 2));
        return EXIT_OK;
      }
      const rows = tasks.map((t) => [
        t.id,
        t.status,
        t.kind,
        t.stage,
        String(t.priority),
        t.prerequisites.join(","),
        t.title,
      ]);
      for (const line of formatTable(["ID", "STATUS", "KIND", "STAGE", "PRIO", "AFTER", "TITLE"], rows))
        io.out(line);
      return EXIT_OK;
    });
  },
};
