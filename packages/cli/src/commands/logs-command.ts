import {
  LogChunkEventSchema,
  LogEndEventSchema,
  LogUsageEventSchema,
  RunListSchema,
  RunLogSchema,
  RunSchema,
  RunTranscriptEventSchema,
  RunTranscriptSchema,
  TaskTranscriptSchema,
} from "@overseer/api-contract";
import { renderTranscript, type TranscriptEntry } from "@overseer/transcript";
import type { z } from "zod";
import { onePositional, parseCommandArgs } from "../arg-parser.ts";
import { CommandFailed, EXIT_OK } from "../cli-errors.ts";
import type { CliIo } from "../cli-io.ts";
import type { CliCommand } from "../command-registry.ts";
import { selectGatewayProject, withGateway } from "../command-target.ts";
import { eventData, GatewayClient, GatewayHttpError } from "../gateway-client.ts";
import { terminalSafe } from "../terminal-text.ts";

/**
 * `overseer logs RUN|TASK` (README "Watching runs"): what the agent did, as a transcript
 * (docs/transcripts.md) rendered for the terminal by @overseer/transcript: coloured on a TTY,
 * plain when piped. A TASK without -f prints every run of it (GET …/tasks/{id}/transcript);
 * -f follows one run (a TASK: its latest) live, from the project stream's `run.transcript`
 * events, until the run's log stream says it ended. `--raw` prints the agent's original output.
 */

const enc = encodeURIComponent;
const usage = "overseer logs [-f] [--raw] RUN|TASK [--project P]";
/** Reconnections of a followed stream after it broke without its `end` event. */
const MAX_RECONNECTS = 5;

type Run = z.output<typeof RunSchema>;

export const logsCommand: CliCommand = {
  path: ["logs"],
  summary:
    "print what the agent of a run (or every run of a task) did, as a transcript; -f follows it live until the run ends, --raw prints the original output",
  usage,
  async run(args, io) {
    const { values, positionals } = parseCommandArgs(
      args,
      {
        project: { type: "string" },
        follow: { type: "boolean", short: "f" },
        raw: { type: "boolean" },
      },
      usage,
    );
    const target = onePositional(positionals, "Give one run or task id.", usage);
    return withGateway(async () => {
      const client = GatewayClient.fromIo(io);
      const run = await findRun(client, target);
      if (run === null && !values.follow && !values.raw)
        return printTaskTranscript(client, io, target, values.project);
      const runId = run?.id ?? (await latestRunOf(client, target, values.project));
      if (values.raw) return values.follow ? followRawLog(client, io, runId) : printRawLog(client, io, runId);
      const projectId = run?.project_id ?? (await selectGatewayProject(client, values.project));
      const printer = new TranscriptPrinter(io);
      return values.follow
        ? followTranscript(client, io, printer, projectId, runId)
        : printRunTranscript(client, io, printer, projectId, run ?? (await getRun(client, runId)));
    });
  },
};

function getRun(client: GatewayClient, runId: string): Promise<Run> {
  return client.get(`/api/v1/runs/${enc(runId)}`, RunSchema);
}

/** The run with that id, or null when there is none (the id may be a task's). */
async function findRun(client: GatewayClient, id: string): Promise<Run | null> {
  try {
    return await getRun(client, id);
  } catch (error) {
    if (error instanceof GatewayHttpError && error.status === 404) return null;
    throw error;
  }
}

/** The latest run of a task. */
async function latestRunOf(
  client: GatewayClient,
  taskId: string,
  project: string | undefined,
): Promise<string> {
  const projectId = await selectGatewayProject(client, project);
  const { runs } = await client.get(
    `/api/v1/projects/${enc(projectId)}/runs?task=${enc(taskId)}&limit=1`,
    RunListSchema,
  );
  const latest = runs[0];
  if (!latest)
    throw new CommandFailed(
      `No run has id ${taskId}, and task ${taskId} of project ${projectId} has no run yet.`,
    );
  return latest.id;
}

/**
 * Prints transcript entries as the terminal shows them, each `seq` of a run once and in order:
 * entries already printed are skipped, so overlapping reads (the stored transcript, live
 * events) can be given in any mix.
 */
class TranscriptPrinter {
  /** Per run: the highest `seq` printed. */
  readonly #printed = new Map<string, number>();
  constructor(private readonly io: CliIo) {}

  last(runId: string): number {
    return this.#printed.get(runId) ?? -1;
  }

  print(entries: readonly TranscriptEntry[], runId: string): void {
    const fresh = entries.filter((e) => e.seq > this.last(e.runId ?? runId));
    if (fresh.length === 0) return;
    for (const e of fresh) this.#printed.set(e.runId ?? runId, Math.max(this.last(e.runId ?? runId), e.seq));
    // Server strings are sanitised before the renderer adds its colours.
    const text = renderTranscript(fresh.map(safeEntry), { color: this.io.color === true });
    const write = this.io.color && this.io.outStyled ? this.io.outStyled.bind(this.io) : this.io.out;
    for (const line of text.replace(/\n$/, "").split("\n")) write(line);
  }
}

/** Every string of an entry through terminalSafe (messages, commands, outputs, arguments). */
function safeEntry(entry: TranscriptEntry): TranscriptEntry {
  const clean = (value: unknown): unknown => {
    if (typeof value === "string") return terminalSafe(value);
    if (Array.isArray(value)) return value.map(clean);
    if (typeof value === "object" && value !== null)
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, clean(v)]));
    return value;
  };
  return clean(entry) as TranscriptEntry;
}

async function printRunTranscript(
  client: GatewayClient,
  io: CliIo,
  printer: TranscriptPrinter,
  projectId: string,
  run: Run,
): Promise<number> {
  const transcript = await client.get(
    `/api/v1/projects/${enc(projectId)}/runs/${enc(run.id)}/transcript`,
    RunTranscriptSchema,
  );
  if (transcript.entries.length === 0) {
    io.err(`run ${run.id} has no transcript yet (status ${run.status}); follow it with -f`);
    return EXIT_OK;
  }
  if (transcript.truncated) io.err(`run ${run.id}: the oldest entries were left out (size bound)`);
  printer.print(transcript.entries, run.id);
  return EXIT_OK;
}

async function printTaskTranscript(
  client: GatewayClient,
  io: CliIo,
  taskId: string,
  project: string | undefined,
): Promise<number> {
  const projectId = await selectGatewayProject(client, project);
  let transcript: z.output<typeof TaskTranscriptSchema>;
  try {
    transcript = await client.get(
      `/api/v1/projects/${enc(projectId)}/tasks/${enc(taskId)}/transcript`,
      TaskTranscriptSchema,
    );
  } catch (error) {
    if (error instanceof GatewayHttpError && error.status === 404)
      throw new CommandFailed(`No run or task has id ${taskId} in project ${projectId}.`);
    throw error;
  }
  if (transcript.runs.length === 0)
    throw new CommandFailed(`Task ${taskId} of project ${projectId} has no run yet.`);
  if (transcript.entries.length === 0) io.err(`task ${taskId}: its runs have no transcript yet`);
  for (const run of transcript.runs)
    if (run.truncated) io.err(`run ${run.run_id}: the oldest entries were left out (size bound)`);
  new TranscriptPrinter(io).print(transcript.entries, "");
  return EXIT_OK;
}

/**
 * Follows one run's transcript: the project stream's `run.transcript` events of that run,
 * the stored (or live-parsed) transcript read at the start and whenever a gap in `seq` shows
 * entries were missed, until the run's log stream sends `end`; then the rest from the stored one.
 */
async function followTranscript(
  client: GatewayClient,
  io: CliIo,
  printer: TranscriptPrinter,
  projectId: string,
  runId: string,
): Promise<number> {
  const path = `/api/v1/projects/${enc(projectId)}/runs/${enc(runId)}/transcript`;
  const catchUp = async () => printer.print((await client.get(path, RunTranscriptSchema)).entries, runId);
  const stop = new AbortController();
  const live = (async () => {
    for await (const message of client.stream(`/api/projects/${enc(projectId)}/events/stream`, {
      maxReconnects: MAX_RECONNECTS,
      signal: stop.signal,
    })) {
      if (message.event !== "run.transcript") continue;
      const batch = eventData(message, RunTranscriptEventSchema);
      if (batch.runId !== runId || batch.entries.length === 0) continue;
      if ((batch.entries[0]?.seq ?? 0) > printer.last(runId) + 1) await catchUp();
      printer.print(batch.entries, runId);
    }
  })().catch((error: unknown) => {
    if (!stop.signal.aborted) throw error;
  });
  const ended = waitForEnd(client, runId, stop.signal);
  try {
    await catchUp();
    const end = await Promise.race([ended, live.then(() => null)]);
    if (end === null)
      throw new CommandFailed(`The event stream of project ${projectId} ended before run ${runId} did.`);
    stop.abort();
    await catchUp();
    io.err(end);
    return EXIT_OK;
  } finally {
    stop.abort();
    await Promise.allSettled([live, ended]);
  }
}

/** Waits for the run's log stream to send `end`; the line that says how the run ended. */
async function waitForEnd(client: GatewayClient, runId: string, signal: AbortSignal): Promise<string> {
  for await (const message of client.stream(`/api/runs/${enc(runId)}/log/stream`, {
    maxReconnects: MAX_RECONNECTS,
    signal,
  })) {
    if (message.event === "end") return endLine(runId, eventData(message, LogEndEventSchema));
  }
  throw new CommandFailed(`The log stream of run ${runId} stopped before the run ended.`);
}

function endLine(runId: string, end: z.output<typeof LogEndEventSchema>): string {
  const detail = end.transition ? ` (${end.transition})` : end.failure ? ` (${end.failure})` : "";
  return `run ${runId} ended: ${end.status}${detail}`;
}

async function printRawLog(client: GatewayClient, io: CliIo, runId: string): Promise<number> {
  const log = await client.get(`/api/v1/runs/${enc(runId)}/log`, RunLogSchema);
  if (log.output) io.out(log.output.replace(/\n$/, ""));
  else io.err(`run ${runId} has no stored output yet (status ${log.status}); follow it with -f`);
  return EXIT_OK;
}

async function followRawLog(client: GatewayClient, io: CliIo, runId: string): Promise<number> {
  const lines = new LineWriter(io);
  try {
    // Resumes after the last log entry when the stream breaks without `end` (gateway restart, network).
    for await (const message of client.stream(`/api/runs/${enc(runId)}/log/stream`, {
      maxReconnects: MAX_RECONNECTS,
    })) {
      if (message.event === "log") {
        lines.write(eventData(message, LogChunkEventSchema).text);
      } else if (message.event === "usage") {
        // The live token/cost counter, beside the output (stderr).
        const u = eventData(message, LogUsageEventSchema);
        io.err(
          `[usage] ${u.tokens_in.toLocaleString("en-US")} tokens in (${u.tokens_cached.toLocaleString("en-US")} cached), ${u.tokens_out.toLocaleString("en-US")} out, ${u.cost}`,
        );
      } else if (message.event === "end") {
        lines.flush();
        io.err(endLine(runId, eventData(message, LogEndEventSchema)));
        return EXIT_OK;
      }
    }
  } finally {
    lines.flush();
  }
  // Following stops only at `end`, on a refusal or after MAX_RECONNECTS broken connections.
  throw new CommandFailed(`The log stream of run ${runId} stopped before the run ended.`);
}

/** Prints streamed chunks as whole lines (CliIo prints lines). */
class LineWriter {
  private partial = "";
  constructor(private readonly io: CliIo) {}

  write(chunk: string): void {
    const parts = (this.partial + chunk).split("\n");
    this.partial = parts.pop() ?? "";
    for (const line of parts) this.io.out(line);
  }

  flush(): void {
    if (this.partial) this.io.out(this.partial);
    this.partial = "";
  }
}
