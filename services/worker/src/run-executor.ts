/**
 * One run, start to finish, on a stateless worker, in four named phases:
 *
 *   1. checkout (checkout-phase.ts): fetch the mirror when needed, worktree at the task's
 *      head, prompt, control dir, placed files;
 *   2. agent (agent-phase.ts): setup hook → harness in the sandbox (prompt on stdin, transition
 *      from the control dir) → after_run hook, under the run's disk limit;
 *   3. outcome (outcome-phase.ts): the agent's transition, refused when the run may not make it,
 *      and the changed paths against the scope;
 *   4. git (git-phase.ts): commit + CAS push (submit), checkpoint (escalate, timeout, failure,
 *      violation) or land (approve)
 *
 * Every host-side git step is bounded by the mirror's `gitTimeoutMs`; one past it ends the run
 * as a `disk_limit` violation (git-step-bound.ts).
 *
 * → RunResult. Nothing here touches Postgres: the coordinator applies the result. Git always runs
 * on the host with hardened settings (no hooks, fsmonitor, filters from the checkout); the agent
 * only ever runs inside the sandbox.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Worktree } from "@overseer/git";
import { createRedactor } from "@overseer/input-errors";
import type {
  RunEnvironment,
  RunJob,
  RunOutcome,
  RunResult,
  SandboxDriverName,
} from "@overseer/run-contract";
import { runAgent } from "./agent-phase.ts";
import { prepareCheckout } from "./checkout-phase.ts";
import { filesWithMarkers, markerRefusal } from "./conflict-markers.ts";
import { recordWork, type ScopeCheck, type WorkRecord } from "./git-phase.ts";
import { gitStepBreach } from "./git-step-bound.ts";
import { landingCheck } from "./landing-check.ts";
import { decideOutcome, runUsage } from "./outcome-phase.ts";
import {
  buildRunResult,
  type Observed,
  PhaseClock,
  type ResultExtra,
  type RunExecutorDeps,
} from "./run-context.ts";
import { releaseRunDir } from "./run-dirs.ts";
import { prepareEnvironment } from "./run-environment.ts";
import type { RunImage } from "./run-image.ts";
import { scopeViolations } from "./scope-checker.ts";
import { RunTranscriptRecorder } from "./transcript-recorder.ts";
import { RunUsageTracker } from "./usage-tracker.ts";

export {
  type RunExecutorDeps,
  RunOwnershipLostError,
  type RunPaths,
  WorkerShutdownError,
} from "./run-context.ts";

/**
 * What sets each run's dir apart (a redelivered run may start here while its previous dir is
 * still being removed): a tag drawn once per process, since a restarted worker can get its
 * predecessor's pid and find its dirs, and a count. No random draw per run.
 */
const RUN_DIR_TAG = randomBytes(3).toString("hex");
let runDirCount = 0;

function runDirOf(deps: RunExecutorDeps, job: RunJob): string {
  runDirCount += 1;
  return path.join(deps.dataDir, "runs", `${job.runId}-${RUN_DIR_TAG}${runDirCount.toString(36)}`);
}

function runLogger(deps: RunExecutorDeps, job: RunJob) {
  return deps.logger.child({
    runId: job.runId,
    projectId: job.projectId,
    taskId: job.taskId,
    action: job.action,
  });
}

export async function executeRun(
  job: RunJob,
  deps: RunExecutorDeps,
  signal?: AbortSignal,
): Promise<RunResult> {
  const clock = new PhaseClock(job);
  const redact = createRedactor(job.secretValues);
  const log = runLogger(deps, job);
  const runDir = runDirOf(deps, job);
  const mirror = deps.mirrorFor(job);
  let image: RunImage | null = null;
  let environment: RunEnvironment | undefined;
  let sandboxDriver: SandboxDriverName | undefined;
  const finish = (outcome: RunOutcome, extra: ResultExtra = {}) =>
    buildRunResult(job, deps.workerId, clock, outcome, {
      ...extra,
      imageDigest: image?.digest ?? null,
      ...(sandboxDriver ? { sandboxDriver } : {}),
      ...(environment ? { environment } : {}),
    });
  let worktree: Worktree | null = null;
  const usage = new RunUsageTracker(
    job,
    deps.reportUsage ? (u) => deps.reportUsage?.(job, u) ?? Promise.resolve() : undefined,
    log,
    deps.usageReportMs,
  );
  let transcript: RunTranscriptRecorder | null = null;

  try {
    const refusal = deps.sandboxRefusal(job);
    if (refusal !== null)
      return finish({ kind: "misconfigured", reason: "configuration_error", message: refusal });
    sandboxDriver = deps.sandboxDriverFor(job);
    const checkout = await prepareCheckout(job, deps, mirror, runDir, clock, (wt) => {
      worktree = wt;
    });
    if (checkout.kind === "misconfigured") return finish(checkout.outcome);
    // What the run runs on: the runner config's image, else the environment file's.
    const prepared = await prepareEnvironment(job, deps, mirror, checkout, (held) => {
      image = held;
      clock.lap("image");
    });
    environment = prepared.record;
    if (prepared.kind === "misconfigured") return finish(prepared.outcome);
    if (checkout.paths.agentCli) clock.lap("agent_cli");
    const env = prepared.environment;
    // Every sandbox of the run (hooks, agent, landing check) on the run's image.
    const held = image as RunImage | null;
    const onImage: RunExecutorDeps = { ...deps, sandboxFor: (j, p) => deps.sandboxFor(j, p, held) };

    const agentJob = checkout.prompt === job.prompt ? job : { ...job, prompt: checkout.prompt };
    usage.start(checkout.paths.controlDir, signal);
    const recorder = new RunTranscriptRecorder(
      job,
      checkout.paths.checkout,
      {
        maxBytes: deps.maxTranscriptBytes,
        publish: deps.publishTranscript
          ? (entries, kept) => deps.publishTranscript?.(job, entries, kept) ?? Promise.resolve()
          : undefined,
      },
      log,
    );
    transcript = recorder;
    recorder.start(checkout.paths.controlDir);
    const agent = await runAgent(agentJob, onImage, checkout.paths, {
      redact,
      log,
      clock,
      signal,
      usage,
      transcript: recorder,
      setup: { commands: env.setup, timeoutMs: env.setupTimeoutMs },
    }).catch(async (error: unknown) => {
      // Cancelled or shut down mid-run: no result follows, so what it spent is reported now
      // (read before its dirs go), and the rest of its transcript is published.
      await Promise.all([usage.finish(), recorder.finish()]);
      throw error;
    });
    // The checkout is final (the agent's processes are gone): its scope check and the ownership
    // check start beside the reads of what the run spent and did.
    const scope = startScopeCheck(job, deps, checkout.worktree, agent.kind === "finished");
    // What the run spent counts whatever its outcome; what it did is kept whatever its outcome.
    const [counted, record] = await Promise.all([usage.finish(), recorder.finish()]);
    const spent = runUsage(counted, agent.kind === "finished" ? agent.harness.transition : null);
    const ran = { usage: spent, transcript: record };
    if (agent.kind === "ended") return finish(agent.outcome, { ...agent.observed, ...ran });

    const outcome = decideOutcome(job, agent.harness, record.entries, checkout.taskHead, redact, log);
    if (
      checkout.mergedMain !== null &&
      outcome.kind === "transition" &&
      outcome.transition.kind === "submit"
    ) {
      const marked = await filesWithMarkers(checkout.paths.checkout, checkout.mergedMain.conflicts);
      if (marked.length > 0) return finish(markerRefusal(marked), { ...agent.observed, ...ran });
    }
    const work = await recordWork(job, deps, mirror, checkout.worktree, outcome, {
      taskHead: checkout.taskHead,
      base: checkout.base,
      runDir,
      scope,
      mergedMain: checkout.mergedMain !== null,
      check: landingCheck(job, onImage, mirror, { paths: checkout.paths, redact, signal }),
      clock,
    });
    const [finalOutcome, extra] = resultOfWork(work, outcome, agent.observed, await scope.checked);
    return finish(finalOutcome, { ...extra, ...ran });
  } catch (error) {
    // A host-side git step past its bound ends the run as a disk_limit violation.
    const breach = gitStepBreach(error, mirror);
    if (breach === null) throw error;
    log.warn({ err: error }, "a host-side git step of the run ran past its bound");
    const record = await (transcript as RunTranscriptRecorder | null)?.finish();
    return finish(breach, { usage: usage.usage(), ...(record ? { transcript: record } : {}) });
  } finally {
    // Cleanup is off the critical path: the result is reported while the checkout goes.
    const wt = worktree as Worktree | null;
    await (image as RunImage | null)?.release();
    const cleanup = (async () => {
      if (wt) await wt.remove().catch((error) => log.warn({ err: error }, "worktree removal failed"));
      await releaseRunDir(runDir).catch(() => undefined);
    })();
    if (deps.defer) deps.defer(cleanup);
    else await cleanup;
  }
}

/**
 * The scope check (none for a review), started as soon as the checkout is final: the staging,
 * then the list of changed paths against the scope, with the ownership check (a Redis round
 * trip) beside its git. `staged` lets the commit start beside the list (git-phase.ts); both
 * checks are answered (`checked`) before anything is pushed. Its promises are marked handled:
 * a run that ends before the git phase never awaits them.
 */
function startScopeCheck(
  job: RunJob,
  deps: RunExecutorDeps,
  worktree: Worktree,
  finished: boolean,
): ScopeCheck {
  // A run that ended without its agent finishing (a limit, a refused sandbox) is checked by nothing.
  if (!finished) return { staged: Promise.resolve(), checked: Promise.resolve([]) };
  // The staging first: its git process is on the critical path, the ownership round trip is not.
  const review = job.action === "review";
  const staged = review ? Promise.resolve() : worktree.stage();
  const owned = Promise.resolve(deps.confirmOwnership?.(job));
  // The list waits one turn after the staging: the commit (git-phase.ts), which waits for the
  // same staging and is on the critical path, is asked of the process spawner first, and the
  // shorter diff still ends before it.
  const violations = review
    ? Promise.resolve([])
    : staged.then(async () => {
        await nextTurn();
        // Both sides of a rename are checked alike: its deletion and addition are read from the
        // index files, without the git process that pairs them (worktree.ts changedPaths).
        const changes = await worktree.changedPaths({ staged: true, renames: false });
        return scopeViolations(changes, job.scope, job.metadataGlobs);
      });
  const checked = Promise.all([violations, owned]).then(([found]) => found);
  for (const promise of [staged, checked]) promise.catch(() => undefined);
  return { staged, checked };
}

/**
 * What the git phase makes of the outcome: an approve that did not land (a real conflict, a
 * failed check) stays an approve with `landingFailure` set, which the coordinator records as
 * `land-failed`; a lost compare-and-swap push is a run without a transition (retried on the
 * new head); a landing refused by branch protection is a configuration error (the task waits,
 * the project pauses, the message names `landing.mode: pull_request`); otherwise the outcome
 * stands with its commits.
 */
export function resultOfWork(
  work: WorkRecord,
  outcome: RunOutcome,
  observed: Observed,
  violations: string[],
): [RunOutcome, ResultExtra] {
  switch (work.kind) {
    case "land-failed":
      return [
        outcome,
        {
          ...observed,
          landingFailure: { reason: work.reason, files: work.files, details: work.details },
          scopeViolations: violations,
        },
      ];
    case "lost-race":
      return [{ kind: "no-transition", crashed: false, detail: work.detail }, observed];
    case "protected":
      return [{ kind: "misconfigured", reason: "configuration_error", message: work.message }, observed];
    case "ok":
      return [outcome, { ...observed, ...work.commits, scopeViolations: violations }];
  }
}
