import { createApiToken, TOKEN_SCOPES, type TokenScope } from "@overseer/db";
import { parseCommandArgs } from "../arg-parser.ts";
import { withDatabase } from "../cli-context.ts";
import { EXIT_OK, UsageError } from "../cli-errors.ts";
import type { CliCommand } from "../command-registry.ts";

const usage = "overseer token create --scope read|operate|admin [--name NAME] [--json]";

/**
 * Creates an API token directly in Postgres (the first token cannot come from the API).
 * The plaintext is printed once; only its hash is stored.
 */
export const tokenCreateCommand: CliCommand = {
  path: ["token", "create"],
  summary: "create an API token (printed once; stored hashed)",
  usage,
  async run(args, io) {
    const { values } = parseCommandArgs(
      args,
      { scope: { type: "string" }, name: { type: "string" }, json: { type: "boolean" } },
      usage,
      false,
    );
    if (!values.scope || !(TOKEN_SCOPES as readonly string[]).includes(values.scope)) {
      throw new UsageError(`--scope must be one of ${TOKEN_SCOPES.join(", ")}.\nUsage: ${usage}`);
    }
    return withDatabase(io, { migrate: true }, async ({ db }) => {
      const created = await createApiToken(db, {
        name: values.name ?? `${values.scope}-token`,
        scope: values.scope as TokenScope,
      });
      if (values.json) io.out(JSON.stringify(created));
      else io.out(created.token);
      return EXIT_OK;
    });
  },
};
