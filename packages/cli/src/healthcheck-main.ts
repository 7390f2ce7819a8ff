/**
 * `node dist/healthcheck.js coordinator|gateway|worker [--file PATH] [--max-age-ms N]`: exit 0
 * when the service's heartbeat file is fresh, 1 (with the reason on stderr) when it is stale or
 * missing, 2 on a usage error. Meant for a container HEALTHCHECK: it loads Node built-ins only
 * (no npm dependency, no connection), see packages/runtime/src/heartbeat-file.ts.
 */
import { parseArgs } from "node:util";
import { checkHeartbeatFile, HEALTH_SERVICES, healthFilePath } from "@overseer/runtime/heartbeat-file";

function main(argv: string[]): number {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    process.stderr.write(`healthcheck: ${(error as Error).message}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const service = positionals[0];
  if (positionals.length !== 1 || !HEALTH_SERVICES.includes(service as never)) {
    process.stderr.write(`usage: healthcheck ${HEALTH_SERVICES.join("|")} [--file PATH] [--max-age-ms N]\n`);
    return 2;
  }
  const maxAgeMs = values["max-age-ms"] === undefined ? undefined : Number(values["max-age-ms"]);
  if (maxAgeMs !== undefined && !(Number.isInteger(maxAgeMs) && maxAgeMs > 0)) {
    process.stderr.write("healthcheck: --max-age-ms takes a positive whole number of milliseconds\n");
    return 2;
  }
  const file = values.file ?? healthFilePath(service as string);
  const verdict = checkHeartbeatFile(file, maxAgeMs === undefined ? {} : { maxAgeMs });
  if (!verdict.ok) {
    process.stderr.write(`unhealthy: ${verdict.reason}\n`);
    return 1;
  }
  process.stdout.write(`healthy: ${service} pid ${verdict.record.pid}, last beat ${verdict.ageMs} ms ago\n`);
  return 0;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: { file: { type: "string" }, "max-age-ms": { type: "string" } },
  });
}

process.exitCode = main(process.argv.slice(2));
