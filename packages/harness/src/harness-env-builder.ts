import { delimiter } from "node:path";
import { agentBinDir } from "./bundled-paths.ts";

/** PATH used when the allow-listed base env has none. */
export const DEFAULT_SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export interface HarnessEnvInput {
  /** Allow-listed variables from the worker's env or the project's secret store; nothing else is inherited. */
  base: Readonly<Record<string, string | undefined>>;
  /** The project root as the agent sees it (the run's checkout). */
  projectRoot: string;
  taskId: string;
  role: string;
  agentId: string;
  action: string;
  /** Path of the prompt file as the agent sees it. */
  promptFile: string;
  /** The run's control dir as the agent sees it. */
  controlDir: string;
  /** Dirs put on PATH right after the `overseer-agent` dir, before the base PATH. */
  pathPrepend?: readonly string[];
  /**
   * Dir holding `overseer-agent` as the agent sees it; first on PATH. Default
   * {@link agentBinDir} (a sandbox that binds the bin dir elsewhere passes its mount point).
   */
  agentBinDir?: string;
}

/**
 * The complete environment of a harness process: the allow-listed base, then the run's
 * identity under the `OVERSEER_*` names and the Luma runner's `LUMA_*` aliases (these always
 * win over same-named base entries, so an allow-list cannot smuggle in a wrong task id), a
 * PATH whose first entry is the dir of `overseer-agent`, and `OVERSEER_AGENT_BIN`, its absolute
 * path (bound at the same place inside the sandbox).
 */
export function buildHarnessEnv(input: HarnessEnvInput): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(input.base)) {
    if (value !== undefined) env[key] = value;
  }
  const identity: Record<string, string> = {
    PROJECT_ROOT: input.projectRoot,
    TASK_ID: input.taskId,
    ROLE: input.role,
    AGENT_ID: input.agentId,
    ACTION: input.action,
    PROMPT_FILE: input.promptFile,
    CONTROL_DIR: input.controlDir,
  };
  for (const [suffix, value] of Object.entries(identity)) {
    env[`OVERSEER_${suffix}`] = value;
    env[`LUMA_${suffix}`] = value;
  }
  const binDir = input.agentBinDir ?? agentBinDir();
  // Its absolute path, for wrappers and shells that reset PATH (the failure classifier's fix).
  env.OVERSEER_AGENT_BIN = `${binDir}/overseer-agent`;
  const basePath = env.PATH && env.PATH.length > 0 ? env.PATH : DEFAULT_SYSTEM_PATH;
  const first = [binDir, ...(input.pathPrepend ?? [])];
  const rest = basePath.split(delimiter).filter((dir) => dir.length > 0 && !first.includes(dir));
  env.PATH = [...first, ...rest].join(delimiter);
  return env;
}
