/**
 * `GET /console/...`: the console (gateway/console), a web page built to static files that talks to
 * /v1 like any client. `index.html` answers every console address that is not an asset (the page routes
 * in the browser, so a link such as a tool's configuration_url, `/console/services/{id}/connect`, opens its
 * screen directly) and is revalidated on each load; assets under `/console/assets/` carry a content hash in
 * their names and are cached for a year. Files are read once, when first asked for, and served gzip- or
 * brotli-compressed when the browser accepts it. The page runs no inline script: its
 * Content-Security-Policy allows this origin only, nothing from elsewhere.
 *
 * Stripe's default return addresses (`/checkout/success`, `/checkout/cancelled`, billing's
 * STRIPE_SUCCESS_URL and STRIPE_CANCEL_URL) lead to the console's wallet screen.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import type { Context, Middleware } from "koa";
import { errorBody } from "../http/errors.js";

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".html": "text/html; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".woff2": "font/woff2",
  ".json": "application/json",
};

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

interface Asset {
  type: string;
  raw: Buffer;
  gzip?: Buffer;
  br?: Buffer;
}

/** Where the built console is: `@toolport/console`'s dist/, or null when it is not installed or built. */
export function consoleDistDir(): string | null {
  try {
    const require = createRequire(import.meta.url);
    const dir = path.join(path.dirname(require.resolve("@toolport/console/package.json")), "dist");
    readFileSync(path.join(dir, "index.html"));
    return dir;
  } catch {
    return null;
  }
}

/** Serves the console from `distDir` (null: not built, /console answers 503 saying how to build it). */
export function consoleMiddleware(distDir: string | null): Middleware {
  if (distDir !== null && !existsSync(path.join(distDir, "index.html"))) {
    throw new Error(`the console folder ${distDir} has no index.html (CONSOLE_DIR names a vite build of gateway/console)`);
  }
  const assetNames = new Set(distDir ? safeList(path.join(distDir, "assets")) : []);
  const cache = new Map<string, Asset>();

  function load(file: string): Asset {
    let asset = cache.get(file);
    if (!asset) {
      const raw = readFileSync(path.join(distDir!, file));
      asset = { type: TYPES[path.extname(file)] ?? "application/octet-stream", raw };
      cache.set(file, asset);
    }
    return asset;
  }

  return async (ctx, next) => {
    if (ctx.path === "/checkout/success" || ctx.path === "/checkout/cancelled") {
      if (ctx.method !== "GET" && ctx.method !== "HEAD") return next();
      const outcome = ctx.path.endsWith("success") ? "success" : "cancelled";
      ctx.redirect(`/console/wallet?checkout=${outcome}`);
      return;
    }
    if (ctx.path !== "/console" && !ctx.path.startsWith("/console/")) return next();
    if (ctx.method !== "GET" && ctx.method !== "HEAD") {
      ctx.status = 405;
      ctx.set("Allow", "GET, HEAD");
      ctx.body = errorBody("method_not_allowed", `${ctx.method} is not allowed on ${ctx.path}; allowed: GET, HEAD`);
      return;
    }
    if (!distDir) {
      ctx.status = 503;
      ctx.set("Retry-After", "60");
      ctx.body = errorBody(
        "service_unavailable",
        "the console is not built: run `pnpm --filter @toolport/console build` (npm start and pnpm run build do)",
      );
      return;
    }
    if (ctx.path.startsWith("/console/assets/")) {
      const name = ctx.path.slice("/console/assets/".length);
      if (!assetNames.has(name)) {
        ctx.status = 404;
        ctx.body = errorBody("not_found", `no console asset ${name}`);
        return;
      }
      ctx.set("Cache-Control", "public, max-age=31536000, immutable");
      send(ctx, load(`assets/${name}`));
      return;
    }
    // Any other console address is a screen: the page, which routes in the browser.
    ctx.set("Cache-Control", "no-cache");
    ctx.set("Content-Security-Policy", CSP);
    ctx.set("X-Content-Type-Options", "nosniff");
    ctx.set("Referrer-Policy", "same-origin");
    send(ctx, load("index.html"));
  };
}

function send(ctx: Context, asset: Asset): void {
  ctx.type = asset.type;
  ctx.vary("Accept-Encoding");
  const compressible =
    asset.type.startsWith("text/") || asset.type.startsWith("image/svg") || asset.type.startsWith("application/json");
  if (compressible && asset.raw.length > 1024) {
    const encoding = ctx.acceptsEncodings("br", "gzip", "identity");
    if (encoding === "br") {
      asset.br ??= brotliCompressSync(asset.raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } });
      ctx.set("Content-Encoding", "br");
      ctx.body = asset.br;
      return;
    }
    if (encoding === "gzip") {
      asset.gzip ??= gzipSync(asset.raw, { level: 9 });
      ctx.set("Content-Encoding", "gzip");
      ctx.body = asset.gzip;
      return;
    }
  }
  ctx.body = asset.raw;
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
