/**
 * The gateway's response shapes, for clients typed from them (the web app imports these as
 * types only: `z.infer<typeof ProjectStatusSchema>`).
 */
export * from "./fleet-schemas.ts";
export * from "./resource-schemas.ts";
