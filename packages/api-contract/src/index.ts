/**
 * The HTTP API contract (docs/http-api.md): zod schemas of the gateway's path parameters,
 * request bodies and responses. The gateway wires them into its routes and OpenAPI document;
 * the CLI parses every answer with them; the web app infers its types from them.
 */
export * from "./authorization.ts";
export * from "./dashboard-links.ts";
export * from "./fleet-schemas.ts";
export * from "./forge-schemas.ts";
export * from "./id-schemas.ts";
export * from "./intake-schemas.ts";
export * from "./mcp-schemas.ts";
export * from "./notification-api-schemas.ts";
export * from "./notification-schemas.ts";
export * from "./operator-schemas.ts";
export * from "./pull-request-schemas.ts";
export * from "./resource-schemas.ts";
export * from "./run-environment-schemas.ts";
export * from "./slack-schemas.ts";
export * from "./tracker-update-schemas.ts";
export * from "./transcript-schemas.ts";
export * from "./worker-schemas.ts";
