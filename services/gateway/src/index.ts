export {
  API_TITLE,
  API_VERSION,
  createGatewayApp,
  type GatewayApp,
  type GatewayControls,
} from "./gateway-app.ts";
export type { AuthenticatedToken, GatewayEnv } from "./gateway-env.ts";
export {
  GATEWAY_DEFAULTS,
  type GatewayDeps,
  type GatewayOptions,
  resolveGatewayOptions,
} from "./gateway-options.ts";
export { type RunningGateway, type ServerOptions, startGateway } from "./gateway-server.ts";
