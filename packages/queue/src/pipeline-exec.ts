import type { Redis } from "./redis-connection.ts";

/** Runs a pipeline and throws the first command error (a pipeline reports errors per command). */
export async function execAll(pipeline: ReturnType<Redis["pipeline"]>): Promise<void> {
  for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
}
