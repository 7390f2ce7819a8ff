import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createGatewayApp, type GatewayApp } from "./gateway-app.ts";
import { type GatewayDeps, type GatewayOptions, resolveGatewayOptions } from "./gateway-options.ts";

export interface RunningGateway {
  readonly app: GatewayApp;
  readonly server: Server;
  readonly host: string;
  readonly port: number;
  /** `http://host:port`, no trailing slash. */
  readonly url: string;
  /**
   * Graceful shutdown: new SSE streams are refused and open ones end (clients reconnect
   * elsewhere with Last-Event-ID), the listener closes, in-flight requests finish, and
   * connections still open after `shutdownGraceMs` are destroyed.
   */
  close(): Promise<void>;
}

/** Starts the gateway HTTP server and resolves once it listens. Options are resolved here, once. */
export async function startGateway(deps: GatewayDeps, options: GatewayOptions = {}): Promise<RunningGateway> {
  const settings = resolveGatewayOptions(options);
  const { host, shutdownGraceMs: graceMs } = settings;
  const app = createGatewayApp(deps, settings);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: settings.port }, () =>
      resolve(s as Server),
    ) as Server;
    s.once("error", reject);
  });
  const address = server.address() as AddressInfo;
  const urlHost = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  let closing: Promise<void> | null = null;
  deps.logger.info({ host, port: address.port }, "gateway listening");
  return {
    app,
    server,
    host,
    port: address.port,
    url: `http://${urlHost}:${address.port}`,
    close: () => {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        // Ended streams and finished requests leave keep-alive connections idle a moment
        // later: keep closing idle ones until the server is closed, then force the rest.
        const sweeper = setInterval(() => server.closeIdleConnections(), 50);
        const timer = setTimeout(() => server.closeAllConnections(), graceMs);
        server.closeIdleConnections();
        await app.shutdown();
        await closed;
        clearInterval(sweeper);
        clearTimeout(timer);
        deps.logger.info({ port: address.port }, "gateway stopped");
      })();
      return closing;
    },
  };
}
