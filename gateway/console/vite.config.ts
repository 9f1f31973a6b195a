/**
 * The console is built to static files in dist/ (index.html and content-hashed assets under
 * dist/assets/), which the gateway serves at /console (gateway/src/middleware/console.ts). Workspace
 * packages resolve to their TypeScript source, like everywhere else in the workspace.
 */
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  base: "/console/",
  plugins: [react()],
  resolve: { conditions: ["@toolport/source", "module", "browser", "development|production"] },
  // `pnpm --filter @toolport/console dev`: the page with hot reload, /v1 passed to a gateway on :8080
  // (`npm start`); GATEWAY_URL points elsewhere.
  server: { proxy: { "/v1": process.env.GATEWAY_URL ?? "http://localhost:8080" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    // One chunk per screen besides the shell, so the first load carries only what it shows.
    chunkSizeWarningLimit: 300,
  },
});
