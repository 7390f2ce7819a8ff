import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { ImportResultSchema, TaskPageSchema, TaskSchema } from "@overseer/api-contract";
import { existingTaskIds, listTasks } from "@overseer/db";
import { TASK_STATUSES } from "@overseer/domain";
import { formatFromExtension, formatProblems, loadTaskFile, validateTaskList } from "@overseer/task-files";
import { importTasks, TransitionApplier } from "@overseer/transitions";
import type { z } from "zod";
import { onePositional, parseCommandArgs, requirePositive } from "../arg-parser.ts";
import { withDatabase } from "../cli-context.ts";
import { CLI_DEFAULTS } from "../cli-defaults.ts";
import { EXIT_OK, EXIT_USAGE, UsageError } from "../cli-errors.ts";
import { type CliIo, formatTable } from "../cli-io.ts";
import type { CliCommand } from "../command-registry.ts";
import { commandTarget, describeTarget, selectGatewayProject, withGateway } from "../command-target.ts";
import { type GatewayClient, GatewayHttpError } from "../gateway-client.ts";
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
    const target = commandTarget(io);
    io.err(describeTarget(target));
    if (target.kind === "gateway") return importThroughGateway(target.client, io, file, values.project);
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
    const card = {
      id: values.id,
      title: values.title,
      body: values.body,
      role: values.role,
      stage: values.stage,
      scope: values.scope,
      prerequisites: values.after,
      acceptance: values.acceptance,
      priority,
    };
    const target = commandTarget(io);
    io.err(describeTarget(target));
    if (target.kind === "gateway") {
      const { client } = target;
      return withGateway(async () => {
        const projectId = await selectGatewayProject(client, values.project);
        await client.post(`/api/v1/projects/${encodeURIComponent(projectId)}/tasks`, card, TaskSchema);
        io.out(`added ${card.id} to ${projectId}`);
        return EXIT_OK;
      });
    }
    return withDatabase(io, { migrate: true }, async ({ db }) => {
      const projectId = await selectProject(db, values.project);
      const result = validateTaskList([card], "command line", {
        existingIds: await existingTaskIds(db, projectId),
      });
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
    const limit = requirePositive(values.limit, "--limit") ?? CLI_DEFAULTS.taskListLimit;
    const target = commandTarget(io);
    io.err(describeTarget(target));
    const tasks: readonly ListedTask[] =
      target.kind === "gateway"
        ? await listThroughGateway(target.client, values.project, values.status, limit)
        : await withDatabase(io, {}, async ({ db }) => {
            const projectId = await selectProject(db, values.project);
            return (await listTasks(db, projectId, { status: values.status, limit })).tasks;
          });
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
      pullRequestCell(t),
      t.title,
    ]);
    for (const line of formatTable(["ID", "STATUS", "KIND", "STAGE", "PRIO", "AFTER", "PR", "TITLE"], rows))
      io.out(line);
    return EXIT_OK;
  },
};

/** The columns `task list` prints, the same in a task row and in the API's task. */
interface ListedTask extends Pick<TaskView, "id" | "status" | "kind" | "stage" | "priority" | "title"> {
  readonly prerequisites: readonly string[];
  /** Its pull request: the domain task's (local) or the API's (through the gateway). */
  readonly pullRequest?: { readonly number: number | null; readonly status: string } | null;
  readonly pull_request?: { readonly number: number | null; readonly status: string } | null;
}

/** `#12 open` for a task's pull request (`opening` before the forge numbered it), or empty. */
function pullRequestCell(t: ListedTask): string {
  const pr = t.pullRequest ?? t.pull_request ?? null;
  if (pr === null) return "";
  return pr.number === null ? pr.status : `#${pr.number} ${pr.status}`;
}
type TaskView = z.output<typeof TaskSchema>;
/** Tasks per request of the gateway's task list (its limit). */
const GATEWAY_PAGE = 1000;

/** POST …/tasks/import with the file as it is; the gateway validates it like the local path. */
async function importThroughGateway(
  client: GatewayClient,
  io: CliIo,
  file: string,
  requested: string | undefined,
): Promise<number> {
  const format = formatFromExtension(file);
  if (!format) throw new UsageError(`${file}: expected a .json, .yaml or .yml file.\nUsage: ${importUsage}`);
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`${file}: cannot read the file (${error.code ?? error.message}).`);
  });
  return withGateway(async () => {
    const projectId = await selectGatewayProject(client, requested);
    try {
      const r = await client.postDocument(
        `/api/v1/projects/${encodeURIComponent(projectId)}/tasks/import`,
        { text, contentType: format === "yaml" ? "application/yaml" : "application/json" },
        ImportResultSchema,
      );
      io.out(`imported ${r.imported} task(s) into ${projectId}`);
      return EXIT_OK;
    } catch (error) {
      const problems = error instanceof GatewayHttpError ? fileProblems(error) : null;
      if (!problems) throw error;
      for (const problem of problems) io.err(`${file}: ${problem}`);
      io.err(`Nothing was imported into ${projectId}.`);
      return EXIT_USAGE;
    }
  });
}

/** The problems of a 422 `invalid_task_file` answer, one line each; null for another error. */
function fileProblems(error: GatewayHttpError): string[] | null {
  if (error.code !== "invalid_task_file") return null;
  const details = (error.body as { error?: { details?: { problems?: { message?: unknown }[] } } } | null)
    ?.error?.details;
  const lines = (details?.problems ?? []).map((p) => String(p.message));
  return lines.length > 0 ? lines : [error.message];
}

/** Pages of GET …/tasks until `limit` tasks or the last page. */
async function listThroughGateway(
  client: GatewayClient,
  requested: string | undefined,
  statuses: readonly string[] | undefined,
  limit: number,
): Promise<TaskView[]> {
  return withGateway(async () => {
    const projectId = await selectGatewayProject(client, requested);
    const tasks: TaskView[] = [];
    let cursor: string | null = null;
    do {
      const query = new URLSearchParams({ limit: String(Math.min(GATEWAY_PAGE, limit - tasks.length)) });
      if (statuses && statuses.length > 0) query.set("status", statuses.join(","));
      if (cursor) query.set("cursor", cursor);
      const page = await client.get(
        `/api/v1/projects/${encodeURIComponent(projectId)}/tasks?${query}`,
        TaskPageSchema,
      );
      tasks.push(...page.tasks);
      cursor = page.next_cursor;
    } while (cursor && tasks.length < limit);
    return tasks;
  });
}
