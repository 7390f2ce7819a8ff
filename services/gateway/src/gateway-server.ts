import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createGatewayApp, type GatewayApp } from "./gateway-app.ts";
import type { GatewayDeps, GatewayOptions } from "./gateway-options.ts";

export interface ServerOptions extends GatewayOptions {
  /** Address to listen on. Default `127.0.0.1` (loopback only; set `0.0.0.0` deliberately to expose it). */
  host?: string;
  /** Port; 0 picks a free one. Default 7070. */
  port?: number;
  /** After shutdown began, connections still open after this many ms are destroyed. Default 5000. */
  shutdownGraceMs?: number;
}

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

/** Starts the gateway HTTP server and resolves once it listens. */
export async function startGateway(deps: GatewayDeps, options: ServerOptions = {}): Promise<RunningGateway> {
  const host = options.host ?? "127.0.0.1";
  const graceMs = options.shutdownGraceMs ?? 5000;
  const app = createGatewayApp(deps, options);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: options.port ?? 7070 }, () =>
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
