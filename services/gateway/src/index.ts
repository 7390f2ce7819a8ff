export { createGatewayApp, API_TITLE, API_VERSION, type GatewayApp, type GatewayControls } from "./gateway-app.ts";
export { startGateway, type RunningGateway, type ServerOptions } from "./gateway-server.ts";
export { GATEWAY_DEFAULTS, resolveGatewayOptions, type GatewayDeps, type GatewayOptions } from "./gateway-options.ts";
export type { AuthenticatedToken, GatewayEnv } from "./gateway-env.ts";
