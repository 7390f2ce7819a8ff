import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

/**
 * The built operator web app (`apps/web`, `npm run build -w @overseer/web`): its HTML entry
 * points and hashed assets, read into memory once (the bundle is small and immutable between
 * deploys). Only files found under `dist/` at startup can ever be served, so no request path
 * reaches the file system.
 */
export interface WebAsset {
  readonly body: Uint8Array;
  readonly contentType: string;
}

export interface WebAssets {
  /** Where the build was read from. */
  readonly dir: string;
  /** `index.html` (the app) and `docs.html` (API reference), or null when the app is not built. */
  page(name: "index.html" | "docs.html"): WebAsset | null;
  /** A file under `dist/assets/` by its name, or null. */
  asset(name: string): WebAsset | null;
  readonly built: boolean;
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
  ".map": "application/json",
};

/**
 * `web/` beside the module when it runs from the production build (scripts/build.mjs copies
 * `apps/web/dist` to `dist/web`), else `apps/web/dist` found through the workspace package.
 */
export function defaultWebDir(): string {
  const beside = path.join(import.meta.dirname, "web");
  if (existsSync(path.join(beside, "index.html"))) return beside;
  const require = createRequire(import.meta.url);
  try {
    return path.join(path.dirname(require.resolve("@overseer/web/package.json")), "dist");
  } catch {
    return path.resolve(import.meta.dirname, "../../../../apps/web/dist");
  }
}

export function loadWebAssets(dir: string): WebAssets {
  const pages = new Map<string, WebAsset>();
  const assets = new Map<string, WebAsset>();
  const read = (file: string): WebAsset => ({
    body: readFileSync(file),
    contentType: CONTENT_TYPES[path.extname(file)] ?? "application/octet-stream",
  });
  if (existsSync(dir)) {
    for (const name of ["index.html", "docs.html"]) {
      const file = path.join(dir, name);
      if (existsSync(file)) pages.set(name, read(file));
    }
    const assetDir = path.join(dir, "assets");
    if (existsSync(assetDir)) {
      for (const name of readdirSync(assetDir)) {
        const file = path.join(assetDir, name);
        if (statSync(file).isFile()) assets.set(name, read(file));
      }
    }
  }
  return {
    dir,
    built: pages.has("index.html"),
    page: (name) => pages.get(name) ?? null,
    asset: (name) => assets.get(name) ?? null,
  };
}

/** Content-Security-Policy of the app pages: scripts and styles only from the gateway itself. */
export const APP_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** The API reference (Swagger UI) sets inline styles in its markup. */
export const DOCS_CSP = APP_CSP.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'");

/** What `/` answers when `apps/web` has not been built (a checkout without `npm ci`). */
export function notBuiltPage(dir: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Overseer</title></head><body>
<h1>Overseer</h1><p>The web app is not built (nothing at ${escapeHtml(dir)}). Run <code>npm run build -w @overseer/web</code> (npm ci does it) and restart the gateway. The API works without it; see /openapi.json.</p></body></html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
