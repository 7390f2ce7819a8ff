import { randomBytes } from "node:crypto";
import { posix } from "node:path";
import { formatZodIssues } from "@overseer/input-errors";
import { DEFAULT_SANDBOX_LIMITS, egressHostRuleSchema } from "@overseer/run-contract";
import { z } from "zod";
import { SandboxSpecError } from "./sandbox-errors.ts";

/**
 * The per-run sandbox request, validated once at the driver boundary. Every driver receives the
 * parsed (defaulted, normalised) form, so path normalisation and safety refusals live here and
 * nowhere else.
 */

/** Directories that may never be made writable inside a sandbox (the system and kernel interfaces). */
const SYSTEM_DIRS = [
  "/proc",
  "/sys",
  "/dev",
  "/usr",
  "/etc",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/boot",
];
/** Directories that may never be bound into a sandbox at all (host kernel interfaces). */
const KERNEL_DIRS = ["/proc", "/sys", "/dev"];

function isUnder(path: string, dir: string): boolean {
  return path === dir || path.startsWith(`${dir}/`);
}

/** Normalises an absolute path: collapses `.`/`..`/`//`, drops a trailing slash. */
export function normalizeAbsolutePath(path: string): string {
  const normalized = posix.normalize(path);
  return normalized.length > 1 && normalized.endsWith("/") ? normalized.slice(0, -1) : normalized;
}

const absolutePath = z
  .string()
  .min(1, { error: "expected an absolute path, received an empty string", abort: true })
  .refine((p) => p.startsWith("/"), {
    error: (issue) => `expected an absolute path, received ${JSON.stringify(issue.input)}`,
  })
  .refine((p) => !/[\0\n]/.test(p), { message: "a path without NUL or newline characters" })
  .transform(normalizeAbsolutePath);

/** A file name that can stand in /bin: no slash, no leading dot or dash. */
const commandName = z
  .string()
  .regex(
    /^[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}$/,
    "a command name of 1-64 characters of [A-Za-z0-9_.+-], not starting with . or -",
  );

const writablePath = absolutePath.refine((p) => !SYSTEM_DIRS.some((d) => isUnder(p, d)) && p !== "/", {
  error: `a directory the sandbox may make writable: not "/" nor a system directory (${SYSTEM_DIRS.join(" ")}) but the run's own checkout or control directory`,
});

const readOnlyPath = absolutePath.refine((p) => p !== "/" && !KERNEL_DIRS.some((d) => isUnder(p, d)), {
  error: `a specific directory the run needs: binding "/" or ${KERNEL_DIRS.join(" ")} would expose the whole host or its kernel interfaces`,
});

/** Host names as the egress proxy compares them: lower case, no trailing dot. */
export function normalizeHostName(host: string): string {
  const lower = host.trim().toLowerCase();
  const unbracketed = lower.startsWith("[") && lower.endsWith("]") ? lower.slice(1, -1) : lower;
  return unbracketed.endsWith(".") ? unbracketed.slice(0, -1) : unbracketed;
}

/** An allow-list entry (`host`, `host:port`, `*.domain`), by the same schema the runner config uses. */
const hostRule = egressHostRuleSchema.transform((h) => h.trim().toLowerCase());

const port = z.number().int().min(1).max(65535);

export const networkPolicySchema = z.discriminatedUnion(
  "mode",
  [
    z.object({ mode: z.literal("none") }),
    z.object({
      mode: z.literal("proxy"),
      /** Host rules (`host`, `host:port`, `*.domain`; see the run contract's egress-host-rule.ts) the run may reach through the egress proxy. */
      allowHosts: z
        .array(hostRule)
        .min(1, 'at least one host (proxy mode needs one; use mode "none" for no network)'),
      /** Destination ports allowed for rules without a port. Default `[443, 80]`. */
      allowPorts: z.array(port).min(1).optional(),
    }),
  ],
  { error: 'a network mode: "none" or "proxy"' },
);

export const sandboxLimitsSchema = z.object({
  pidsMax: z.number().int().min(8).max(4_194_304).default(DEFAULT_SANDBOX_LIMITS.pidsMax),
  memoryBytes: z
    .number()
    .int()
    .min(64 * 1024 ** 2, "at least 64 MiB (an agent cannot run in less)")
    .default(DEFAULT_SANDBOX_LIMITS.memoryBytes),
  cpuSeconds: z.number().int().min(1).default(DEFAULT_SANDBOX_LIMITS.cpuSeconds),
  /** CPU bandwidth (cores, e.g. 1.5) via the cgroup cpu quota. Default: not capped. */
  cpus: z.number().positive().max(1024).optional(),
  tmpfsBytes: z
    .number()
    .int()
    .min(1024 ** 2)
    .default(DEFAULT_SANDBOX_LIMITS.tmpfsBytes),
  /**
   * Largest file any process in the sandbox may write (RLIMIT_FSIZE; a write beyond it fails
   * with SIGXFSZ/EFBIG). A hard bound that needs no polling: one file can never outgrow it.
   * Default: not capped.
   */
  fileSizeBytes: z.number().int().min(4096).optional(),
});

const envName = /^[A-Za-z_][A-Za-z0-9_]*$/;
const sandboxEnvSchema = z
  .record(
    z.string(),
    z.string().refine((v) => !v.includes("\0"), { message: "an environment value without NUL characters" }),
  )
  .superRefine((env, ctx) => {
    for (const key of Object.keys(env)) {
      if (!envName.test(key)) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `an environment variable name matching [A-Za-z_][A-Za-z0-9_]*, received the name ${JSON.stringify(key)}`,
        });
      }
    }
  });

const unprivilegedId = z
  .number()
  .int()
  .min(1, "an unprivileged uid/gid such as 1000 or 65534 (id 0, root, is refused inside the sandbox)")
  .max(4_294_967_294);

export const sandboxSpecSchema = z.object({
  /** Identifies the run: names the per-run cgroup. Default: 12 random hex chars. */
  runId: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, "a run id of 1-64 characters of [A-Za-z0-9_.-]")
    .default(() => randomBytes(6).toString("hex")),
  /** The run's checkout: writable, and the working directory of the command. */
  checkoutDir: writablePath,
  /** Where the agent writes its transition file: writable. */
  controlDir: writablePath,
  /** Extra host paths visible read-only at the same path (git dirs, harness installs, `overseer-agent`). */
  readOnlyBinds: z.array(readOnlyPath).default([]),
  /**
   * Commands runnable by bare name even with no environment at all (`env -i NAME`, whose PATH-less
   * search is glibc's `/bin:/usr/bin` or the shell's built-in default): command name → host file.
   * bwrap binds each read-only at `/bin/NAME` (see bin-snapshot.ts); the `none` driver cannot
   * place anything on the host and ignores them.
   */
  commands: z.record(commandName, absolutePath).default({}),
  /** Host paths masked inside the sandbox (only meaningful when they lie under a bound path). */
  hiddenPaths: z.array(absolutePath).default([]),
  /**
   * The COMPLETE environment of the command; nothing else passes. The sandbox drivers add only
   * HOME (the private home) and, for bwrap, PWD (the checkout); proxy mode adds the *_PROXY variables.
   */
  env: sandboxEnvSchema,
  network: networkPolicySchema.default({ mode: "none" }),
  limits: sandboxLimitsSchema.default(() => sandboxLimitsSchema.parse({})),
  /**
   * The unpacked root filesystem of the run's image (the image cache's read-only directory for
   * one digest): the sandbox's /usr, /bin, /lib*, /opt and /etc come from it instead of the host.
   * Absent: the host's system, as before.
   */
  rootfs: readOnlyPath.optional(),
  /** Unprivileged uid inside the sandbox. Default: 1000 (bwrap). */
  uid: unprivilegedId.optional(),
  /** Unprivileged gid inside the sandbox. Default: same rule as `uid`. */
  gid: unprivilegedId.optional(),
});

/** What callers pass to `SandboxDriver.prepare` (defaults filled in by the driver). */
export type SandboxSpec = z.input<typeof sandboxSpecSchema>;
/** The validated, defaulted, normalised spec every driver works from. */
export type ResolvedSandboxSpec = z.output<typeof sandboxSpecSchema>;
export type SandboxLimits = z.output<typeof sandboxLimitsSchema>;
export type NetworkPolicy = z.output<typeof networkPolicySchema>;

/** Validates and defaults a spec; throws `SandboxSpecError` naming every bad field. */
export function parseSandboxSpec(input: unknown): ResolvedSandboxSpec {
  const result = sandboxSpecSchema.safeParse(input);
  if (!result.success) {
    throw new SandboxSpecError(`invalid sandbox spec: ${formatZodIssues(result.error.issues, input)}`);
  }
  return result.data;
}
