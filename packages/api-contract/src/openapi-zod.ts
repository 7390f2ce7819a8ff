import { extendZodWithOpenApi } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";

/**
 * zod with `.openapi()` metadata (component names, examples, path parameters). It is the same
 * zod instance `@hono/zod-openapi` extends, so the gateway's route wiring reads these schemas'
 * metadata while clients (the CLI) use them without Hono.
 */
extendZodWithOpenApi(z);

export { z };
