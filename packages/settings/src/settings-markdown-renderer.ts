import type { SettingReference } from "./service-settings.ts";
import { type SettingSpec, SPECS } from "./service-settings-schema.ts";

/**
 * The configuration reference, in declaration order: the README table is generated from it
 * (`renderSettingsMarkdown`) and checked against it.
 */
export const SETTINGS_REFERENCE: readonly SettingReference[] = Object.freeze(
  Object.values(SPECS).map((s: SettingSpec<unknown>) =>
    Object.freeze({
      name: s.name,
      default: s.defaultLabel ?? String(s.fallback),
      description: s.description,
    }),
  ),
);

/**
 * The README's configuration reference: a markdown table with one row per environment
 * variable (name, default, description), in `SETTINGS_REFERENCE` order. The README section is
 * generated from this output and can be checked against it in a test, so the two cannot drift.
 */
export function renderSettingsMarkdown(reference: readonly SettingReference[] = SETTINGS_REFERENCE): string {
  const rows = reference.map(
    (s) => `| \`${s.name}\` | ${renderDefault(s.default)} | ${escapeCell(s.description)} |`,
  );
  return `${["| Variable | Default | Description |", "| --- | --- | --- |", ...rows].join("\n")}\n`;
}

/**
 * Literal defaults are code-formatted, worded parts ("(none)", "(made absolute …)") are not.
 * Pipes are escaped even inside code spans: GFM splits table cells before parsing code.
 */
function renderDefault(value: string): string {
  const worded = /^(.*?)\s*(\(.*\))$/.exec(value);
  if (value.startsWith("(")) return escapeCell(value);
  if (worded?.[1]) return `\`${escapeCell(worded[1])}\` ${escapeCell(worded[2] ?? "")}`;
  return `\`${escapeCell(value)}\``;
}

function escapeCell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\n/g, " ");
}
