/**
 * The gateway as its own process (gateway-main.ts, as in production) on a port the OS
 * chooses, for benchmarks that must not share the load generator's event loop.
 */
import { type ServiceProcess, type StartServiceOptions, startService } from "./service-process.ts";

export interface GatewayProcess {
  service: ServiceProcess;
  /** Base URL, no trailing slash. */
  url: string;
}

/**
 * Starts the gateway on 127.0.0.1 with `env` (DATABASE_URL, REDIS_URL, prefix…) and resolves
 * once its `gateway listening` log line names the port (so LOG_LEVEL must be info or lower).
 * A gateway that exits or stays silent for `timeoutMs` is killed and the start fails.
 */
export async function startGatewayProcess(
  env: Record<string, string>,
  timeoutMs = 30_000,
  options: StartServiceOptions = {},
): Promise<GatewayProcess> {
  const service = startService(
    "gateway",
    { ...env, OVERSEER_GATEWAY_HOST: "127.0.0.1", OVERSEER_GATEWAY_PORT: "0" },
    options,
  );
  try {
    const port = await listeningPort(service, timeoutMs);
    return { service, url: `http://127.0.0.1:${port}` };
  } catch (error) {
    await service.kill("SIGKILL");
    throw error;
  }
}

/** The port from the gateway's `gateway listening` log line, waiting on its output with a bound. */
async function listeningPort(service: ServiceProcess, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  const stdout = service.child.stdout;
  for (;;) {
    const match = /"port":(\d+)[^\n]*"msg":"gateway listening"/.exec(service.output());
    if (match) return Number(match[1]);
    if (service.child.exitCode !== null)
      throw new Error(`the gateway exited early:\n${service.output().slice(-2000)}`);
    const left = deadline - Date.now();
    if (left <= 0 || !stdout)
      throw new Error(`the gateway did not listen within ${timeoutMs} ms:\n${service.output().slice(-2000)}`);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, left);
      stdout.once("data", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
