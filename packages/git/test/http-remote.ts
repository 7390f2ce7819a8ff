import http from "node:http";
import type { AddressInfo } from "node:net";
import { serveGitHttp } from "@overseer/test-support";

/**
 * Serves the repositories under `root` over git's smart HTTP protocol: real `git http-backend`
 * (test-support's `serveGitHttp`, pushes allowed for its authenticated user) behind a local
 * HTTP server. `url(name)` is the remote URL of `<root>/<name>`. Test support only.
 */
export async function serveGitOverHttp(root: string): Promise<{
  url: (name: string) => string;
  close: () => Promise<void>;
}> {
  const server = http.createServer((request, response) => {
    const pathInfo = new URL(request.url ?? "/", "http://localhost").pathname;
    serveGitHttp(root, pathInfo, request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (name) => `http://127.0.0.1:${port}/${name}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
