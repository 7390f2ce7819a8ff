import { accessSync, constants, existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Which program runs the process spawner (process-spawner.ts): the Perl one
 * (bin/process-spawner.pl) where a `perl` is found on PATH, else the Node one
 * (bin/process-spawner.mjs). Same frames, same rules; they differ in what a spawn costs: a fork's
 * CPU grows with the forking process's memory, and a spawn of /bin/true costs ~1.6 ms of CPU
 * through the ~55 MB Node spawner (its own and the child's) against ~1.2 ms through the ~6 MB
 * Perl one (test/bench/git-spawner-bench.ts measures it per git call).
 *
 * `auto` (the default) takes Perl when found; `perl` the same, warning when it falls back;
 * `node` always Node (`OVERSEER_PROCESS_SPAWNER_PROGRAM`). A Perl spawner that exits by itself
 * before its first answer (a perl without its core modules) is not started again: the calls it
 * held fail (process-spawner.ts), the next ones go through Node.
 */
export const SPAWNER_PROGRAM_CHOICES = ["auto", "perl", "node"] as const;
export type SpawnerProgramChoice = (typeof SPAWNER_PROGRAM_CHOICES)[number];

export interface SpawnerCommand {
  kind: "perl" | "node";
  file: string;
  args: string[];
}

/** Where a spawner script is: beside the bundle in the production build, in bin/ in the sources. */
function scriptPath(name: string): string | undefined {
  const candidates = [new URL(`./${name}`, import.meta.url), new URL(`../bin/${name}`, import.meta.url)];
  return candidates.map((url) => fileURLToPath(url)).find((file) => existsSync(file));
}

let perl: string | null | undefined;
let perlFailed = false;
const warned = new Set<string>();

/** An absolute path of an executable `perl` on this process's PATH, looked up once. */
function findPerl(): string | null {
  if (perl !== undefined) return perl;
  perl = null;
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, "perl");
    try {
      accessSync(candidate, constants.X_OK);
      perl = candidate;
      break;
    } catch {
      // Not here.
    }
  }
  return perl;
}

function warnOnce(message: string): void {
  if (warned.has(message)) return;
  warned.add(message);
  process.emitWarning(message);
}

/** A Perl spawner ended by itself before answering: use Node from now on. */
export function perlSpawnerFailed(): void {
  perlFailed = true;
  warnOnce(
    "the Perl process spawner exited before its first answer; children are spawned through the Node one",
  );
}

/** The command that starts the spawner `choice` asks for; undefined when no spawner script is found. */
export function spawnerCommand(choice: SpawnerProgramChoice): SpawnerCommand | undefined {
  if (choice !== "node" && !perlFailed) {
    const script = scriptPath("process-spawner.pl");
    const interpreter = findPerl();
    if (script && interpreter) return { kind: "perl", file: interpreter, args: [script] };
    if (choice === "perl")
      warnOnce("no perl on PATH (or process-spawner.pl is missing); using the Node process spawner");
  }
  const entry = scriptPath("process-spawner.mjs");
  if (entry === undefined) {
    warnOnce(
      "process-spawner.mjs is missing beside the bundle (scripts/build.mjs copies it there); children are spawned directly",
    );
    return undefined;
  }
  return { kind: "node", file: process.execPath, args: [entry] };
}
