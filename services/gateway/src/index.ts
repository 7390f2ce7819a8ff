export {
  API_TITLE,
  API_VERSION,
  createGatewayApp,
  type GatewayApp,
  type GatewayControls,
} from "./gateway-app.ts";
export type { AuthenticatedToken, GatewayEnv } from "./gateway-env.ts";
export {
  type GatewayDeps,
  type GatewayOptions,
  type ResolvedGatewayOptions,
  resolveGatewayOptions,
} from "./gateway-options.ts";
export { type RunningGateway, startGateway } from "./gateway-server.ts";
