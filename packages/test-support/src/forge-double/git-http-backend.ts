/**
 * One smart-HTTP git request served by git's own `git http-backend` (CGI): its CGI headers
 * become the HTTP status and headers. `root` holds the bare repositories; `pathInfo` is the
 * request path below it (`/owner/repo.git/info/refs`).
 */
import { spawn } from "node:child_process";
import type { IncomingMessage, ServerResponse } from "node:http";

export function serveGitHttp(
  root: string,
  pathInfo: string,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const url = new URL(req.url ?? "/", "http://localhost");
  const cgi = spawn("git", ["http-backend"], {
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: "1",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      REMOTE_USER: "test",
      REQUEST_METHOD: req.method ?? "GET",
      PATH_INFO: decodeURIComponent(pathInfo),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      ...(req.headers["content-encoding"] ? { HTTP_CONTENT_ENCODING: req.headers["content-encoding"] } : {}),
      ...(req.headers["git-protocol"] ? { GIT_PROTOCOL: String(req.headers["git-protocol"]) } : {}),
    },
    stdio: ["pipe", "pipe", "ignore"],
  });
  req.pipe(cgi.stdin);
  let head = Buffer.alloc(0);
  let headersSent = false;
  cgi.stdout.on("data", (chunk: Buffer) => {
    if (headersSent) {
      res.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end === -1) return;
    let status = 200;
    for (const line of head.subarray(0, end).toString("latin1").split("\r\n")) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === "status") status = Number.parseInt(value, 10);
      else res.setHeader(name, value);
    }
    res.writeHead(status);
    headersSent = true;
    res.write(head.subarray(end + 4));
  });
  cgi.on("close", () => res.end());
}
