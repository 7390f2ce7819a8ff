/**
 * A smart-HTTP git remote for tests, served by git's own `git http-backend` (CGI) behind a
 * Node HTTP server, whose pushes can be held: once `holdPushes()` is called, every
 * `git-receive-pack` request waits until `release()` before git sees it, so a test can act
 * while a worker's push is in flight (a slow forge). Fetches are never held.
 */
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";

export interface SlowGitServer {
  /** The remote URL of `repo` (a bare repository under `root`). */
  url(repo: string): string;
  /** Holds every push from now on; resolves once one is waiting. */
  holdPushes(): Promise<void>;
  /** Lets the held pushes (and every later one) through. */
  release(): void;
  close(): Promise<void>;
}

export async function startSlowGitServer(root: string): Promise<SlowGitServer> {
  let holding = false;
  let held: (() => void)[] = [];
  let waiting: (() => void) | null = null;
  const server: Server = createServer((req, res) => {
    const pushing = (req.url ?? "").includes("git-receive-pack") && req.method === "POST";
    if (pushing && holding) {
      held.push(() => backend(root, req, res));
      waiting?.();
      return;
    }
    backend(root, req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (repo) => `http://127.0.0.1:${port}/${path.relative(root, repo)}`,
    holdPushes: () => {
      holding = true;
      return new Promise<void>((resolve) => {
        waiting = resolve;
      });
    },
    release: () => {
      holding = false;
      for (const go of held) go();
      held = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One request through `git http-backend`: its CGI headers become the HTTP status and headers. */
function backend(root: string, req: IncomingMessage, res: ServerResponse): void {
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
      PATH_INFO: decodeURIComponent(url.pathname),
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
