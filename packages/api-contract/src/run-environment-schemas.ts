import { z } from "./openapi-zod.ts";

/** What a run ran on (README "Project images"): `Run.environment` of GET /api/v1/runs/{id}. */
export const RunEnvironmentSchema = z
  .object({
    file: z.object({ path: z.string(), blob: z.string() }).nullable().openapi({
      description:
        "The repository's `.overseer/environment.yml` in the commit the run checked out (its git blob id); null = the commit has none.",
    }),
    image: z.string().nullable().openapi({ example: "registry.example.com/ci/python:3.12" }),
    image_from: z.enum(["runner_config", "environment_file"]).nullable().openapi({
      description:
        "Which side named the image: the runner config's `sandbox.image` wins over the environment file's `image`; null = no image.",
    }),
    ignored_image: z.string().nullable().openapi({
      description: "The environment file's image when the runner config's `sandbox.image` overrode it.",
    }),
    setup_commands: z
      .number()
      .int()
      .openapi({ description: "Setup commands of the file run before the agent." }),
    agent_package: z.string().nullable().openapi({
      description:
        "The agent CLI the worker installed for the run (`package@version`, the file's `agent.npm`).",
      example: "@openai/codex@0.171.0",
    }),
  })
  .openapi("RunEnvironment");
