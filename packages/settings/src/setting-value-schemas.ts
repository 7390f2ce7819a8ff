import os from "node:os";
import { z } from "zod";

/** The zod schemas of setting values: each takes the raw environment text and says what it expected. */

export function integer(min: number, max: number): z.ZodType<number, string> {
  const expected = `an integer from ${min} to ${max}`;
  return z
    .string()
    .regex(/^\d+$/, { error: expected })
    .transform(Number)
    .pipe(z.int({ error: expected }).min(min, { error: expected }).max(max, { error: expected }));
}

/** A comma-separated setting as its trimmed, non-empty items ("" is the empty list). */
export const commaList = z.string().transform((v) =>
  v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean),
);

export const HOST_PORT_EXPECTED = "a comma-separated list of host:port such as redis-1:6379, 10.0.0.5:26379";

/** A comma-separated list of `host:port` (IPv6 in brackets), frozen. */
export const hostPortList: z.ZodType<readonly string[], string> = commaList
  .pipe(
    z.array(
      z
        .string()
        .refine(
          (v) =>
            /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.-]{0,252}):\d{1,5}$/.test(v) &&
            Number(v.slice(v.lastIndexOf(":") + 1)) <= 65535,
          {
            error: HOST_PORT_EXPECTED,
          },
        ),
    ),
  )
  .transform((list) => Object.freeze(list));

export const CIDR_EXPECTED = "a comma-separated list of CIDRs such as 10.0.0.0/8, 127.0.0.1/32 or fd00::/8";

export const BOOLEAN_EXPECTED = "one of 1, 0, true, false, yes, no";
export const booleanSetting: z.ZodType<boolean, string> = z.stringbool({
  truthy: ["1", "true", "yes"],
  falsy: ["0", "false", "no"],
  case: "insensitive",
  error: BOOLEAN_EXPECTED,
});

export function url(protocols: readonly string[], expected: string): z.ZodType<string, string> {
  return z
    .string()
    .refine((v) => URL.canParse(v) && protocols.includes(new URL(v).protocol), { error: expected });
}

export function oneOf<const T extends readonly [string, ...string[]]>(
  values: T,
): z.ZodType<T[number], string> {
  return z.enum(values, { error: `one of ${values.join(", ")}` });
}

export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const ORIGIN_EXPECTED = "a comma-separated list of origins such as https://app.example.com, or *";

export function isOrigin(value: string): boolean {
  if (value === "*") return true;
  if (!URL.canParse(value)) return false;
  const u = new URL(value);
  return (u.protocol === "http:" || u.protocol === "https:") && u.origin === value.replace(/\/$/, "");
}

export const MS_MAX = 3_600_000;
/** Smallest JSON text of one imported task (`{"id":"S01-00001","title":"t"},`), for the import/body check. */
export const MIN_TASK_BYTES = 32;
export const BYTES_MAX = 1_073_741_824;
export const MIB = 1024 * 1024;

/** A duration default as the reference shows it: `30000 (30 s)`, `900000 (15 min)`. */
export function durationLabel(ms: number): string {
  const seconds = ms / 1000;
  return seconds >= 60 && seconds % 60 === 0 ? `${ms} (${seconds / 60} min)` : `${ms} (${seconds} s)`;
}

export function defaultWorkerId(): string {
  const host =
    os
      .hostname()
      .replace(/[^A-Za-z0-9._-]/g, "-")
      .replace(/^[^A-Za-z0-9]+/, "") || "worker";
  return `${host.slice(0, 100)}-${process.pid}`;
}
