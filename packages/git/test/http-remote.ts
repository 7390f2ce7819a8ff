import { spawn } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Serves the repositories under `root` over git's smart HTTP protocol: real `git http-backend`
 * as a CGI program behind a local HTTP server, pushes allowed. `url(name)` is the remote URL of
 * `<root>/<name>`. Test support only.
 */
export async function serveGitOverHttp(root: string): Promise<{
  url: (name: string) => string;
  close: () => Promise<void>;
}> {
  const server = http.createServer((request, response) => {
    const parsed = new URL(request.url ?? "/", "http://localhost");
    const backend = spawn("git", ["-c", "http.receivepack=true", "http-backend"], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: "1",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_CONFIG_GLOBAL: "/dev/null",
        REQUEST_METHOD: request.method ?? "GET",
        PATH_INFO: decodeURIComponent(parsed.pathname),
        QUERY_STRING: parsed.search.slice(1),
        CONTENT_TYPE: request.headers["content-type"] ?? "",
        HTTP_CONTENT_ENCODING: String(request.headers["content-encoding"] ?? ""),
        GIT_PROTOCOL: String(request.headers["git-protocol"] ?? ""),
        REMOTE_ADDR: "127.0.0.1",
        ...(request.headers["content-length"] ? { CONTENT_LENGTH: request.headers["content-length"] } : {}),
      },
      stdio: ["pipe", "pipe", "ignore"],
    });
    request.pipe(backend.stdin);
    const chunks: Buffer[] = [];
    backend.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    backend.on("close", () => {
      const out = Buffer.concat(chunks);
      const end = out.indexOf("\r\n\r\n");
      const split = end === -1 ? out.indexOf("\n\n") : end;
      const headerText = out.subarray(0, Math.max(split, 0)).toString("latin1");
      const body = split === -1 ? Buffer.alloc(0) : out.subarray(split + (end === -1 ? 2 : 4));
      let status = 200;
      for (const line of headerText.split(/\r?\n/)) {
        const colon = line.indexOf(":");
        if (colon === -1) continue;
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else response.setHeader(name, value);
      }
      response.writeHead(status);
      response.end(body);
    });
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
