import { resolve } from "node:path";
import { defineConfig } from "vite";

/**
 * Two entry points: the app (`index.html`, served at `/`) and the API reference
 * (`docs.html`, served at `/docs`). Every output file lands in `dist/assets/` with a content
 * hash; the gateway serves them with an immutable cache header. Preact's JSX runtime through
 * Vite's own transformer (no plugin needed).
 */
export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    chunkSizeWarningLimit: 2000,
    rollupOptions: {
      input: {
        index: resolve(import.meta.dirname, "index.html"),
        docs: resolve(import.meta.dirname, "docs.html"),
      },
    },
  },
  server: {
    proxy: { "/api": "http://127.0.0.1:7070", "/openapi.json": "http://127.0.0.1:7070" },
  },
});
