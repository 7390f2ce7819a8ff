/**
 * Source of the tiny forwarder started inside a proxy-mode sandbox: it listens on
 * 127.0.0.1:<port> in the sandbox's own (otherwise empty) network namespace and pipes every
 * connection to the egress proxy's unix socket, so clients configured with
 * HTTPS_PROXY=http://127.0.0.1:<port> work unchanged. It prints "ready" once listening; the
 * launcher waits for that line before exec'ing the agent. Plain CommonJS, no dependencies, run
 * by the host's node binary (bound read-only).
 */
export const EGRESS_BRIDGE_SOURCE = `"use strict";
const net = require("node:net");
const [port, socketPath] = process.argv.slice(2);
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  client.on("error", () => upstream.destroy());
  upstream.on("error", () => client.destroy());
  client.on("close", () => upstream.destroy());
  upstream.on("close", () => client.destroy());
  client.pipe(upstream);
  upstream.pipe(client);
});
server.on("error", (error) => {
  process.stderr.write("overseer egress bridge: " + error.message + "\\n");
  process.exit(1);
});
server.listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\\n"));
`;

/** Port the bridge listens on inside the sandbox (its own network namespace, so no clash). */
export const DEFAULT_EGRESS_BRIDGE_PORT = 3128;
