/**
 * The gateway's Koa application. Middleware reads top-down in the order a request meets it: error
 * shaping (first, so nothing below it answers an error in another shape), JSON answers encoded once,
 * `GET /livez` (the process serves, nothing else checked), request id and access log, the request's trace
 * span, metrics (and `GET /metrics`), unmatched routes, NUL in the URL, `GET /` (the console for a
 * browser, the API root for a program), the API reference (`GET /docs`), the console (`GET /console/...`)
 * and `GET /llms.txt`, JSON body, then the /v1 routes.
 */
import Router from "@koa/router";
import Koa from "koa";
import type { AppDeps } from "./deps.js";
import { jsonBody } from "./middleware/body.js";
import { consoleDistDir, consoleMiddleware } from "./middleware/console.js";
import { docsMiddleware, llmsMiddleware, rootMiddleware } from "./middleware/docs.js";
import { errorMiddleware } from "./middleware/errors.js";
import { jsonBytesMiddleware } from "./middleware/json-bytes.js";
import { livenessMiddleware } from "./middleware/livez.js";
import { metricsMiddleware } from "./middleware/metrics.js";
import { unmatchedRoutes } from "./middleware/not-found.js";
import { requestIdMiddleware } from "./middleware/request-id.js";
import { tracingMiddleware } from "./middleware/tracing.js";
import { urlGuard } from "./middleware/url-guard.js";
import { DescribedRouter } from "./openapi/describe.js";
import { healthRoutes } from "./routes/health.js";
import { apiRoutes } from "./routes/index.js";
import { oauthServerRouter } from "./routes/oauth-server.js";
import { openApiRoutes } from "./routes/openapi.js";

export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: deps.config.TRUST_PROXY });
  app.silent = true; // errors are shaped and logged by errorMiddleware, once, with the request id
  app.use(errorMiddleware(deps.log));
  app.use(jsonBytesMiddleware());
  app.use(livenessMiddleware(deps.readiness));
  app.use(requestIdMiddleware(deps.log, deps.config.RPC_TIMEOUT_MS));
  app.use(tracingMiddleware());
  app.use(metricsMiddleware());
  app.use(unmatchedRoutes());
  app.use(urlGuard());
  app.use(rootMiddleware(deps.config.PUBLIC_URL));
  app.use(docsMiddleware());
  app.use(consoleMiddleware(deps.config.CONSOLE_DIR ?? consoleDistDir()));
  // The authorization server's protocol endpoints read their own (form) bodies, before the JSON parser.
  const authorizationServer = oauthServerRouter(deps);
  app.use(authorizationServer.routes());
  const api = v1Routes(deps);
  app.use(llmsMiddleware(api, deps.config.PUBLIC_URL));
  const v1 = api.router;
  app.use(
    jsonBody({
      limitBytes: deps.config.BODY_LIMIT_BYTES,
      publishLimitBytes: deps.config.PUBLISH_BODY_LIMIT_BYTES,
      routed: (method, path) => v1.match(path, method).route,
    }),
  );

  app.use(v1.routes());
  app.use(v1.allowedMethods());
  return app;
}

/**
 * The /v1 routes. Every one registers with its description (openapi/describe.ts), served at
 * /v1/openapi.json.
 */
export function v1Routes(deps: AppDeps): DescribedRouter {
  const api = new DescribedRouter(new Router({ prefix: "/v1" }), "/v1");
  healthRoutes(api, deps.config);
  apiRoutes(api, deps);
  openApiRoutes(api, deps.config);
  return api;
}
