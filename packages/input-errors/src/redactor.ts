export const REDACTED = "[REDACTED]";

/** Secrets shorter than this are not redacted by value: they would mangle ordinary text. */
export const MIN_REDACTABLE_SECRET_LENGTH = 4;

/** Bearer tokens and common credential shapes, redacted even when nobody declared them. */
const TOKEN_PATTERNS: readonly RegExp[] = [
  /\bovr_[A-Za-z0-9_-]{16,}\b/g, // Overseer API tokens
  /\bgh[pousr]_[A-Za-z0-9]{20,}\b/g, // GitHub tokens
  /\bsk-[A-Za-z0-9_-]{20,}\b/g, // OpenAI/Anthropic-style keys
  /(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/g,
];

/**
 * Returns a function that replaces every occurrence of the given secret values (and of
 * well-known token shapes) with `[REDACTED]`. Used on log lines, stored run output and
 * live log streams alike, so one secret list protects all three.
 */
export function createRedactor(secrets: readonly string[]): (text: string) => string {
  const values = [...new Set(secrets.filter((s) => s.length >= MIN_REDACTABLE_SECRET_LENGTH))].sort(
    (a, b) => b.length - a.length,
  );
  const literal = values.length > 0 ? new RegExp(values.map(escapeRegExp).join("|"), "g") : null;
  return (text) => {
    let out = literal ? text.replace(literal, REDACTED) : text;
    for (const pattern of TOKEN_PATTERNS) {
      out = out.replace(pattern, (match, prefix?: string) =>
        typeof prefix === "string" && match.startsWith(prefix) ? `${prefix}${REDACTED}` : REDACTED,
      );
    }
    return out;
  };
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
