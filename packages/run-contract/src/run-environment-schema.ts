import { z } from "zod";
import { imageReferenceSchema } from "./image-reference.ts";

/**
 * What a run ran on, as the worker resolved it when the run started (README "Project images"):
 * the repository's `.overseer/environment.yml` in the commit it checked out (path and blob id,
 * or null: none), the image and which side named it (the runner config's `sandbox.image` wins
 * over the file's; `ignoredImage` is the file's when it lost), how many of the file's setup
 * commands ran before the agent, and the agent CLI installed for it.
 */
export const runEnvironmentSchema = z.object({
  file: z.object({ path: z.string().min(1), blob: z.string().regex(/^[0-9a-f]{40,64}$/) }).nullable(),
  image: imageReferenceSchema.nullable(),
  imageFrom: z.enum(["runner_config", "environment_file"]).nullable(),
  ignoredImage: imageReferenceSchema.optional(),
  setupCommands: z.number().int().nonnegative(),
  agentPackage: z.string().min(1).nullable(),
});
export type RunEnvironment = z.infer<typeof runEnvironmentSchema>;
