import { imageReferenceSchema } from "@overseer/run-contract";
import { decodeStrictUtf8 } from "@overseer/task-files";
import { isMap, isSeq, LineCounter, parseDocument } from "yaml";
import { z } from "zod";

/**
 * `.overseer/environment.yml`: the run environment a repository asks for, read by the worker from
 * the commit each run checks out (README "Project images"):
 *
 *   image: registry.example.com/ci/python:3.12   # a tag or name@sha256:…
 *   setup:                                        # in the sandbox, on the image, in the checkout
 *     - pip install --user -r requirements.txt    # a string runs under the image's /bin/sh -c
 *     - [make, deps]                              # a list is an argv, no shell
 *   setup_timeout_seconds: 600
 *   agent:
 *     npm: "@openai/codex@0.171.0"                 # installed outside the image, bound in
 *
 * The file is the repository's, so anyone who can push (an agent included) writes it: it is
 * parsed on the host as data only (YAML 1.2 core schema, no aliases expanded past a bound, one
 * document, 64 KiB at most), every command runs inside the run's sandbox only, and the runner
 * config's `sandbox.image`, the operator's choice, wins over the file's `image`.
 */

export const ENVIRONMENT_FILE = ".overseer/environment.yml";

/** The largest environment file read (bytes). */
export const MAX_ENVIRONMENT_FILE_BYTES = 64 * 1024;

/** `name@1.2.3` or `@scope/name@1.2.3`: an npm package at one exact version. */
const NPM_PACKAGE = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*@\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/;

const setupCommandSchema = z.union(
  [z.string().trim().min(1).max(4096), z.array(z.string().min(1).max(4096)).min(1).max(256)],
  { error: 'a command: a string (run by the image\'s /bin/sh -c) or an argv list such as ["make", "deps"]' },
);

export const environmentFileSchema = z
  .object({
    image: imageReferenceSchema.optional(),
    setup: z.array(setupCommandSchema).max(32, { error: "at most 32 setup commands" }).default([]),
    setup_timeout_seconds: z.number().int().min(1).max(7200).default(600),
    agent: z
      .object({
        npm: z
          .string()
          .max(214)
          .regex(NPM_PACKAGE, {
            error: (issue) =>
              `an npm package at an exact version such as "@openai/codex@0.171.0", received ${JSON.stringify(issue.input)}`,
          }),
      })
      .strict()
      .optional(),
  })
  .strict();

/** The parsed file, with each setup command as an argv. */
export interface EnvironmentFile {
  image?: string;
  setup: string[][];
  setupTimeoutSeconds: number;
  /** The agent CLI to install (`package@version`), or absent. */
  agentPackage?: string;
}

export type EnvironmentFileResult =
  | { ok: true; value: EnvironmentFile }
  | {
      ok: false;
      /** `.overseer/environment.yml:3:5: setup.0: …`, one line per problem. */
      message: string;
    };

function problem(line: number | undefined, column: number | undefined, text: string): string {
  return line === undefined
    ? `${ENVIRONMENT_FILE}: ${text}`
    : `${ENVIRONMENT_FILE}:${line}:${column ?? 1}: ${text}`;
}

/** Parses the bytes of an environment file; problems name the file, the line and what to fix. */
export function parseEnvironmentFile(bytes: Uint8Array): EnvironmentFileResult {
  if (bytes.byteLength > MAX_ENVIRONMENT_FILE_BYTES)
    return {
      ok: false,
      message: problem(
        undefined,
        undefined,
        `${bytes.byteLength} bytes, over the ${MAX_ENVIRONMENT_FILE_BYTES} bytes allowed; keep it short (build what it installs into the image)`,
      ),
    };
  const text = decodeStrictUtf8(bytes);
  if (text === undefined)
    return { ok: false, message: problem(undefined, undefined, "not valid UTF-8; save it as UTF-8 text") };
  const lines = new LineCounter();
  const doc = parseDocument(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, {
    lineCounter: lines,
    uniqueKeys: true,
    prettyErrors: false,
  });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      message: doc.errors
        .map((e) => {
          const at = lines.linePos(e.pos[0]);
          return problem(at.line, at.col, `${e.message.split("\n")[0] ?? ""}; fix the YAML syntax`);
        })
        .join("\n"),
    };
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (error) {
    return { ok: false, message: problem(undefined, undefined, (error as Error).message) };
  }
  const parsed = environmentFileSchema.safeParse(data);
  if (!parsed.success) {
    return {
      ok: false,
      message: parsed.error.issues
        .map((issue) => {
          const where = positionOf(doc, lines, issue.path);
          const key = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
          const unknown =
            issue.code === "unrecognized_keys"
              ? `unknown key ${issue.keys.map((k) => `"${k}"`).join(", ")} (the keys are image, setup, setup_timeout_seconds, agent.npm)`
              : null;
          return problem(where?.line, where?.col, `${key}${unknown ?? issueText(issue.message)}`);
        })
        .join("\n"),
    };
  }
  const value = parsed.data;
  return {
    ok: true,
    value: {
      ...(value.image === undefined ? {} : { image: value.image }),
      setup: value.setup.map((command) =>
        typeof command === "string" ? ["/bin/sh", "-c", command] : command,
      ),
      setupTimeoutSeconds: value.setup_timeout_seconds,
      ...(value.agent === undefined ? {} : { agentPackage: value.agent.npm }),
    },
  };
}

/** Our messages name what is expected ("an image reference…"); zod's own say it themselves. */
function issueText(message: string): string {
  return /^(an? |one of )/.test(message) ? `expected ${message}` : message.replace(/^Invalid input: /, "");
}

/** Where the node at `path` (or its nearest ancestor in the document) starts. */
function positionOf(
  doc: ReturnType<typeof parseDocument>,
  lines: LineCounter,
  path: readonly PropertyKey[],
): { line: number; col: number } | undefined {
  for (let depth = path.length; depth >= 0; depth -= 1) {
    const node = doc.getIn(path.slice(0, depth) as unknown[], true) as
      | { range?: [number, number, number] }
      | undefined;
    if (node?.range !== undefined) return lines.linePos(node.range[0]);
    if (depth === 0 && (isMap(doc.contents) || isSeq(doc.contents)) && doc.contents.range)
      return lines.linePos(doc.contents.range[0]);
  }
  return undefined;
}
