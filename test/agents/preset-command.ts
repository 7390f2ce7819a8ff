import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { expandArgv } from "@overseer/harness";
import { agentPresetConfig } from "@overseer/project-config";
import type { InstalledAgent } from "./agent-install.ts";
import { COPILOT_BASE_PATH } from "./mock-copilot-api.ts";

/** Where each CLI's API is on a mock model (its `--base-url`). */
export const BASE_PATH: Record<string, string> = {
  codex: "/v1",
  opencode: "/v1",
  copilot: COPILOT_BASE_PATH,
};

export interface PresetCommand {
  argv: string[];
  env: Record<string, string>;
  dirs: { checkout: string; control: string; home: string };
}

/**
 * The command a worker runs for `agent`'s preset (what `overseer init --agent` writes) against a
 * model at `origin`, outside a sandbox: a checkout, control dir and HOME made under `root`, the
 * prompt written to `root/prompt.md`, the environment the preset sets and nothing else.
 */
export function presetCommand(
  agent: InstalledAgent,
  origin: string,
  root: string,
  prompt: string,
): PresetCommand {
  const kind = agent.kind;
  const config = agentPresetConfig(kind, {
    model: `mock-${kind}`,
    baseUrl: `${origin}${BASE_PATH[kind] ?? ""}`,
    bin: agent.binPath,
    apiKey: `sk-mock-${kind}-0123456789`,
  });
  const dirs = {
    checkout: path.join(root, "checkout"),
    control: path.join(root, "control"),
    home: path.join(root, "home"),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(root, "prompt.md"), prompt);
  const argv = expandArgv(config.argv ?? [], {
    root: dirs.checkout,
    task: "S00-001",
    role: "general",
    agent: "execute-general-000000000000",
    action: "execute",
    prompt_file: path.join(root, "prompt.md"),
  });
  const env: Record<string, string> = {
    PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
    HOME: dirs.home,
    OVERSEER_CONTROL_DIR: dirs.control,
    ...config.env,
    ...config.secrets,
  };
  return { argv, env, dirs };
}
