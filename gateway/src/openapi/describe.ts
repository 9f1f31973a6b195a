/**
 * Routes that describe themselves: every /v1 route is registered through a DescribedRouter with its
 * OpenAPI operation (what it takes and what it answers), so the description (`GET /v1/openapi.json`,
 * document.ts) is built from the same calls that register the handlers and cannot list a route that does
 * not exist or miss one that does. What the middleware already decides is read off it, not written twice:
 * the path parameters from the path, the security from the route's `auth()` middleware, the 429 from its
 * `rateLimit()` middleware.
 *
 *   api.get("/workflows/:workflow_id", ops.getWorkflow, optional, handler)
 *
 * An operation lists its successes and the errors particular to it; document.ts adds the ones every route
 * of its kind can answer (`statusesOf`: 400, 401 and 403 with credentials, 404 with a path parameter or
 * the svc-org-id header, 413 and 415 on writes, 429 behind a rate limit, 500, 503, 504).
 */
import type Router from "@koa/router";
import type { Middleware } from "koa";
import { type AuthDescription, authOf } from "../middleware/auth.js";
import { rateLimitBucketOf } from "../middleware/rate-limit.js";
import type { Schema } from "./schemas.js";

export type { Schema };

export interface ParameterDoc {
  description?: string;
  schema: Schema;
  /** Query and header parameters: whether the route refuses the request without it (default false). */
  required?: boolean;
  example?: unknown;
}

export interface ResponseDoc {
  description: string;
  /** The body's schema; none for an empty body. */
  schema?: Schema;
  example?: unknown;
  /** Default application/json. */
  contentType?: string;
  headers?: Record<string, { description: string; schema: Schema }>;
}

export interface OperationDoc {
  /** Unique, camelCase: the typed client's method name. */
  operationId: string;
  summary: string;
  description?: string;
  /** The sections of the reference (one of document.ts `TAGS`). */
  tags: string[];
  /** Path parameters by name: every `:name` of the path, described (required by nature). */
  path?: Record<string, ParameterDoc>;
  query?: Record<string, ParameterDoc>;
  headers?: Record<string, ParameterDoc>;
  body?: { schema: Schema; required?: boolean; description?: string; example?: unknown; contentType?: string };
  /**
   * By status: every success the route answers, and every error particular to it (402, 409, 412, 422, 429
   * outside rate limits, ...). The common errors come from document.ts.
   */
  responses: Record<number, ResponseDoc>;
  deprecated?: boolean;
}

export type Method = "get" | "post" | "put" | "patch" | "delete";

export interface DescribedOperation {
  method: Method;
  /** Koa's path, with the router's prefix: `/v1/workflows/:workflow_id`. */
  path: string;
  doc: OperationDoc;
  /** From the route's auth() middleware; undefined when it has none (public). */
  auth?: AuthDescription;
  /** From the route's rateLimit() middleware. */
  rateLimitBucket?: string;
}

// biome-ignore lint/suspicious/noExplicitAny: handlers of any state and context, as the router takes them
type Handler = Middleware<any, any>;

export class DescribedRouter {
  readonly operations: DescribedOperation[] = [];

  constructor(
    readonly router: Router,
    /** The router's prefix, as the description's paths carry it. */
    readonly prefix: string,
  ) {}

  get(path: string, doc: OperationDoc, ...middleware: Handler[]): void {
    this.add("get", path, doc, middleware);
  }
  post(path: string, doc: OperationDoc, ...middleware: Handler[]): void {
    this.add("post", path, doc, middleware);
  }
  put(path: string, doc: OperationDoc, ...middleware: Handler[]): void {
    this.add("put", path, doc, middleware);
  }
  patch(path: string, doc: OperationDoc, ...middleware: Handler[]): void {
    this.add("patch", path, doc, middleware);
  }
  delete(path: string, doc: OperationDoc, ...middleware: Handler[]): void {
    this.add("delete", path, doc, middleware);
  }

  private add(method: Method, path: string, doc: OperationDoc, middleware: Handler[]): void {
    const named = [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    const described = Object.keys(doc.path ?? {});
    if (named.sort().join() !== described.sort().join()) {
      throw new Error(`${method.toUpperCase()} ${path}: path parameters ${named} are described as ${described}`);
    }
    if (this.operations.some((o) => o.doc.operationId === doc.operationId)) {
      throw new Error(`${method.toUpperCase()} ${path}: operationId ${doc.operationId} is taken`);
    }
    const auth = middleware.map((m) => authOf(m)).find((a) => a !== undefined);
    const rateLimitBucket = middleware.map((m) => rateLimitBucketOf(m)).find((b) => b !== undefined);
    this.operations.push({ method, path: `${this.prefix}${path}`, doc, auth, rateLimitBucket });
    this.router[method](path, ...(middleware as Middleware[]));
  }
}
