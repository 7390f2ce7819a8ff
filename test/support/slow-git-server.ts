/**
 * A smart-HTTP git remote for tests, served by git's own `git http-backend` (CGI) behind a
 * Node HTTP server, whose pushes can be held: once `holdPushes()` is called, every
 * `git-receive-pack` request waits until `release()` before git sees it, so a test can act
 * while a worker's push is in flight (a slow forge). Fetches are never held.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { serveGitHttp } from "@overseer/test-support";

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

function backend(root: string, req: IncomingMessage, res: ServerResponse): void {
  serveGitHttp(root, new URL(req.url ?? "/", "http://localhost").pathname, req, res);
}
