import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { classifyFailure, cliRetryWatch } from "@overseer/harness";
import { type Cidr, parseCidr } from "@overseer/run-contract";
import { EgressProxy, resolveEgressProxyOptions } from "@overseer/sandbox";
import { WORKER_DEFAULTS } from "@overseer/settings";
import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { ensureAgent, selectedAgents } from "./agent-install.ts";
import { closedPort, FailingModelServer, type ModelFailure } from "./mock-failing-model.ts";
import { presetCommand } from "./preset-command.ts";

/**
 * What each pinned CLI prints, run with its preset's command, when the model API refuses it
 * (mock-failing-model.ts) or the gateway behind Overseer's egress proxy is down; and that the
 * failure classifier (@overseer/harness) names the cause from that output. A CLI is stopped
 * {@link SETTLE_MS} after its output first names a configuration cause, as a worker would end
 * it (some retry a refusal for minutes), so a case lasts as long as the CLI takes to say what is
 * wrong. With OVERSEER_RECORD_FIXTURES=1 each CLI runs to its own end (or {@link RUN_MS}) and its
 * whole output is written to packages/harness/test/fixtures/cli-failures, the samples the
 * classifier's unit tests read.
 */

type Case = ModelFailure | "unreachable";
const EXPECTED: Record<Case, string> = {
  auth: "auth_refused",
  model_not_found: "model_not_found",
  quota: "quota_exhausted",
  rate_limit: "rate_limited",
  unreachable: "gateway_unreachable",
};
const RECORDING = process.env.OVERSEER_RECORD_FIXTURES === "1";
/**
 * The bound of one CLI run: long enough for every CLI's own retries of a refusal when recording,
 * or for the worker's watch of them (cliRetryWatch) to end it: opencode retries a rate limit, an
 * exhausted quota and an unreachable gateway forever (a backoff growing to 30 s), reporting each
 * retry only in its log.
 */
const RUN_MS = 150_000;
/** How long a CLI may go on printing once its output names a cause (the rest of its report). */
const SETTLE_MS = 1_000;

/** The egress proxy as a run reaches it: a loopback TCP port forwarded to its Unix socket. */
async function proxied(root: string, origin: string): Promise<{ url: string; close: () => Promise<void> }> {
  const socketPath = path.join(root, "egress.sock");
  const proxy = new EgressProxy(
    resolveEgressProxyOptions({
      socketPath,
      allowHosts: [new URL(origin).host],
      allowPrivateCidrs: [parseCidr("127.0.0.1/32") as Cidr],
    }),
  );
  await proxy.start();
  const bridge: Server = createServer((client) => {
    const upstream = connect(socketPath);
    client.pipe(upstream).pipe(client);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve) => bridge.listen(0, "127.0.0.1", resolve));
  const port = (bridge.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => bridge.close(() => resolve()));
      await proxy.close();
    },
  };
}

async function sample(kind: string, failure: Case): Promise<string> {
  const agent = await ensureAgent(selectedAgents().find((a) => a.kind === kind) as never);
  const model = `mock-${kind}`;
  const server = failure === "unreachable" ? null : await new FailingModelServer(failure, model).start();
  const origin = server?.origin ?? `http://127.0.0.1:${await closedPort()}`;
  const root = mkdtempSync(path.join(tmpdir(), "cli-failure-"));
  const proxy = await proxied(root, origin);
  try {
    const prompt =
      "Create hello.txt with a greeting, then run `overseer-agent submit --message 'Add hello.txt'`.";
    const { argv, env, dirs } = presetCommand(agent, origin, root, prompt);
    for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"])
      env[name] = proxy.url;
    const cli = execa(argv[0] as string, argv.slice(1), {
      cwd: dirs.checkout,
      env,
      extendEnv: false,
      input: prompt,
      all: true,
      reject: false,
      timeout: RUN_MS,
    });
    // What the worker does (agent-phase.ts): the run ends on the line cliRetryWatch names (the
    // CLI's retries of a cause no retry fixes); a check (not a recording) also stops the CLI
    // once its output names a configuration cause, leaving it the rest of its report.
    const watch = cliRetryWatch(WORKER_DEFAULTS.cliRetryLimit);
    let carry = "";
    let printed = "";
    let stopping: NodeJS.Timeout | undefined;
    cli.all?.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      const lines = (carry + text).split("\n");
      carry = lines.pop() ?? "";
      if (lines.some((line) => watch(line))) cli.kill("SIGTERM");
      if (RECORDING) return;
      printed += text;
      if (stopping === undefined && classifyFailure(printed)?.configuration)
        stopping = setTimeout(() => cli.kill("SIGTERM"), SETTLE_MS);
    });
    void cli.finally(() => clearTimeout(stopping));
    const run = await cli;
    expect(run.timedOut, "the CLI's retries or the watch end the run before its time limit").toBe(false);
    return run.all ?? "";
  } finally {
    await proxy.close();
    await server?.close();
    rmSync(root, { recursive: true, force: true });
  }
}

describe.each(selectedAgents().map((a) => [a.kind, a.version] as const))(
  "failure samples: %s %s",
  (kind, version) => {
    for (const failure of Object.keys(EXPECTED) as Case[]) {
      it(
        `names ${failure} as ${EXPECTED[failure]}`,
        async () => {
          const output = await sample(kind, failure);
          if (RECORDING) {
            const dir = new URL("../../packages/harness/test/fixtures/cli-failures/", import.meta.url);
            writeFileSync(new URL(`${kind}-${version}-${failure}.txt`, dir), output);
          }
          const cause = classifyFailure(output);
          // Gemini's API answers a rate limit with its quota message (429 RESOURCE_EXHAUSTED).
          const expected =
            kind === "gemini" && failure === "rate_limit" ? "quota_exhausted" : EXPECTED[failure];
          expect(cause?.code, output.slice(-2000)).toBe(expected);
          expect(cause?.configuration).toBe(true);
        },
        RUN_MS + 30_000,
      );
    }
  },
);
