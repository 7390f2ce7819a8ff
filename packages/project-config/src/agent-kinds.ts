/** Agent CLIs Overseer has presets for (`overseer init --agent NAME`). */
export const AGENT_KINDS = ["codex", "claude", "opencode", "gemini", "copilot"] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];
