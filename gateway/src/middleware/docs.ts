/**
 * `GET /docs`: the API reference, rendered in the browser by Swagger UI (swagger-ui-dist, from npm and
 * served from here: no CDN, so it works offline and behind a firewall) from `GET /v1/openapi.json`.
 * Its assets are under `/docs/assets/`, a fixed list of files; the page runs no inline script, so its
 * Content-Security-Policy allows scripts from this origin only.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Middleware } from "koa";
import type { DescribedRouter } from "../openapi/describe.js";
import { describedDocument } from "../openapi/document.js";
import { llmsTxt } from "../openapi/llms.js";

const require = createRequire(import.meta.url);
const distDir = path.dirname(require.resolve("swagger-ui-dist/package.json"));

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Toolport API reference</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/reference.js"></script>
</body>
</html>
`;

/** Starts Swagger UI on the description; "try it out" sends requests to this gateway. */
const INIT = `window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/v1/openapi.json",
    dom_id: "#reference",
    deepLinking: true,
    docExpansion: "list",
    defaultModelsExpandDepth: 0,
    validatorUrl: null,
    tryItOutEnabled: false,
    persistAuthorization: false,
  });
});
`;

const assets: Record<string, { type: string; file?: string; text?: string }> = {
  "swagger-ui.css": { type: "text/css; charset=utf-8", file: "swagger-ui.css" },
  "swagger-ui-bundle.js": { type: "text/javascript; charset=utf-8", file: "swagger-ui-bundle.js" },
  "favicon-32x32.png": { type: "image/png", file: "favicon-32x32.png" },
  "reference.js": { type: "text/javascript; charset=utf-8", text: INIT },
};
const loaded = new Map<string, Buffer>();

function asset(name: string): Buffer | undefined {
  const a = assets[name];
  if (!a) return undefined;
  let body = loaded.get(name);
  if (!body) {
    body = a.text !== undefined ? Buffer.from(a.text) : readFileSync(path.join(distDir, a.file!));
    loaded.set(name, body);
  }
  return body;
}

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function docsMiddleware(): Middleware {
  return async (ctx, next) => {
    if (ctx.method !== "GET" && ctx.method !== "HEAD") return next();
    if (ctx.path === "/docs" || ctx.path === "/docs/") {
      ctx.set("Content-Security-Policy", CSP);
      ctx.set("Cache-Control", "no-cache");
      ctx.type = "text/html; charset=utf-8";
      ctx.body = PAGE;
      return;
    }
    if (ctx.path.startsWith("/docs/assets/")) {
      const name = ctx.path.slice("/docs/assets/".length);
      const body = Object.hasOwn(assets, name) ? asset(name) : undefined;
      if (!body) return next();
      ctx.set("Cache-Control", "public, max-age=3600");
      ctx.type = assets[name]!.type;
      ctx.body = body;
      return;
    }
    return next();
  };
}

/**
 * `GET /`: where to go from the bare address. A browser (`Accept` names `text/html`) is sent to the
 * console; a program gets the API root as JSON, naming `/v1`, the description, the reference page and the
 * quickstart (absolute, from PUBLIC_URL), instead of a 404 that says nothing.
 */
export function rootMiddleware(publicUrl: string): Middleware {
  const origin = publicUrl.replace(/\/+$/, "");
  const body = {
    name: "Toolport",
    description: "A catalog and execution gateway for callable tools.",
    api: `${origin}/v1`,
    openapi: `${origin}/v1/openapi.json`,
    docs: `${origin}/docs`,
    quickstart: `${origin}/v1/agents/quickstart.md`,
    console: `${origin}/console/`,
    health: `${origin}/v1/health`,
  };
  return async (ctx, next) => {
    if (ctx.path !== "/" || (ctx.method !== "GET" && ctx.method !== "HEAD")) return next();
    ctx.vary("Accept");
    ctx.set("Cache-Control", "no-cache");
    if (ctx.accepts("json", "html") === "html") {
      ctx.redirect("/console/");
      return;
    }
    ctx.body = body;
  };
}

/** `GET /llms.txt`: the description as a text for language models (openapi/llms.ts). */
export function llmsMiddleware(api: DescribedRouter, publicUrl: string): Middleware {
  let text: string | undefined;
  return async (ctx, next) => {
    if (ctx.path !== "/llms.txt" || (ctx.method !== "GET" && ctx.method !== "HEAD")) return next();
    text ??= llmsTxt(describedDocument(api, publicUrl), publicUrl.replace(/\/+$/, ""));
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.type = "text/plain; charset=utf-8";
    ctx.body = text;
  };
}
