import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { execa } from "execa";

/**
 * Pinned agent CLIs for the real-agent suite, installed from npm into a cache OUTSIDE the
 * repository (`OVERSEER_AGENTS_CACHE`, default `~/.cache/overseer-agents`), one npm prefix per
 * package version, reused between runs. They are never dependencies of the repository.
 */
export interface PinnedAgent {
  kind: "codex" | "claude" | "opencode" | "gemini" | "copilot";
  npmPackage: string;
  version: string;
  bin: string;
}

export const PINNED_AGENTS: readonly PinnedAgent[] = [
  { kind: "codex", npmPackage: "@openai/codex", version: "0.171.0", bin: "codex" },
  { kind: "claude", npmPackage: "@anthropic-ai/claude-code", version: "2.1.332", bin: "claude" },
  // The platform binary arrives through an optional dependency (opencode-linux-x64…).
  { kind: "opencode", npmPackage: "opencode-ai", version: "1.18.33", bin: "opencode" },
  { kind: "gemini", npmPackage: "@google/gemini-cli", version: "0.61.0", bin: "gemini" },
  { kind: "copilot", npmPackage: "@github/copilot", version: "1.0.102", bin: "copilot" },
];

/** The pinned agents a run drives: those named in `OVERSEER_AGENTS` (comma-separated), else all. */
export function selectedAgents(
  env: Readonly<Record<string, string | undefined>> = process.env,
): PinnedAgent[] {
  const names =
    env.OVERSEER_AGENTS?.split(",")
      .map((name) => name.trim())
      .filter(Boolean) ?? [];
  return PINNED_AGENTS.filter((agent) => names.length === 0 || names.includes(agent.kind));
}

export interface InstalledAgent extends PinnedAgent {
  /** npm prefix holding the install (bound read-only into the sandbox). */
  prefix: string;
  /** Absolute path of the CLI. */
  binPath: string;
  /** Milliseconds the install took (0 when the cache already had it). */
  installMs: number;
  cached: boolean;
}

export function agentsCacheDir(): string {
  return process.env.OVERSEER_AGENTS_CACHE ?? path.join(homedir(), ".cache", "overseer-agents");
}

/** Installs `agent` into the cache unless it is there; npm trusts the machine's CA bundle. */
export async function ensureAgent(agent: PinnedAgent): Promise<InstalledAgent> {
  const prefix = path.join(agentsCacheDir(), `${agent.kind}-${agent.version}`);
  const binPath = path.join(prefix, "node_modules", ".bin", agent.bin);
  if (existsSync(binPath)) return { ...agent, prefix, binPath, installMs: 0, cached: true };
  await mkdir(prefix, { recursive: true });
  const caBundle = "/etc/ssl/certs/ca-certificates.crt";
  const env: Record<string, string> = {};
  if (!process.env.NODE_EXTRA_CA_CERTS && existsSync(caBundle)) env.NODE_EXTRA_CA_CERTS = caBundle;
  const started = performance.now();
  await execa(
    "npm",
    [
      "install",
      "--prefix",
      prefix,
      "--no-save",
      "--no-audit",
      "--no-fund",
      `${agent.npmPackage}@${agent.version}`,
    ],
    { env, stdio: "inherit", timeout: 600_000 },
  );
  if (!existsSync(binPath))
    throw new Error(`npm installed ${agent.npmPackage}@${agent.version} but ${binPath} is missing`);
  return { ...agent, prefix, binPath, installMs: Math.round(performance.now() - started), cached: false };
}
