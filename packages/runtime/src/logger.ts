import { createRedactor } from "@overseer/input-errors";
import pino, { type Logger } from "pino";

export type { Logger } from "pino";

export interface LoggerOptions {
  /** Service or module name, shown as `name` on every line. */
  name: string;
  /** pino level; default `LOG_LEVEL` env or `info`. */
  level?: string;
  /** Secret values that must never appear in a log line. */
  secrets?: readonly string[];
  /** Where lines go; default stdout (fd 1). */
  destination?: pino.DestinationStream;
}

/** Field paths whose values are always censored, whatever they contain. */
const REDACTED_PATHS = [
  "token",
  "*.token",
  "authorization",
  "*.authorization",
  "req.headers.authorization",
  "headers.authorization",
  "password",
  "*.password",
  "secret",
  "*.secret",
  "env",
  "*.env",
];

/** Defaults of the logger, defined once (`LOG_LEVEL`'s fallback too). */
export const LOGGER_DEFAULTS = Object.freeze({
  /** pino level when neither the options nor `LOG_LEVEL` give one. */
  level: "info",
});

/**
 * Structured logger shared by every service. Secrets are removed twice: by field path
 * (tokens, passwords, env maps) and by value (any configured secret appearing inside a
 * message or string field is replaced with `[REDACTED]`).
 */
export function createLogger(options: LoggerOptions): Logger {
  const redact = createRedactor(options.secrets ?? []);
  return pino(
    {
      name: options.name,
      level: options.level ?? process.env.LOG_LEVEL ?? LOGGER_DEFAULTS.level,
      redact: { paths: REDACTED_PATHS, censor: "[REDACTED]" },
      hooks: {
        streamWrite: (line) => redact(line),
      },
    },
    options.destination ?? pino.destination({ fd: 1, sync: false }),
  );
}
