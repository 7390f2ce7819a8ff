/**
 * The spawner bench's measurement in a process of its own (git-spawner-bench.ts starts it):
 * `node --import tsx test/bench/git-spawner-probe.ts <calls> <rssMb>`; JSON on stdout.
 */
import { measureGitSpawner } from "./git-spawner-bench.ts";

const [calls, rssMb] = process.argv.slice(2).map(Number);
const result = await measureGitSpawner({ calls: calls ?? 400, rssMb: rssMb ?? 130 });
process.stdout.write(`${JSON.stringify(result)}\n`);
