/**
 * A route that is one RPC: the request message is built from the path parameters, the query string
 * and the JSON body (proto field names, snake_case), the response message is returned as JSON with
 * proto field names. Endpoints whose HTTP shape differs from their message (bare arrays, renamed
 * fields, status codes) get a dedicated route module in the issue that implements them.
 */
import {
  type DescMessage,
  type DescMethodUnary,
  type DescService,
  fromJson,
  type JsonObject,
  type JsonValue,
  toJson,
} from "@bufbuild/protobuf";
import type Router from "@koa/router";
import type { RouterContext } from "@koa/router";
import type { AppDeps } from "../app.js";
import { HttpError } from "../http/errors.js";
import { objectBody } from "../http/input.js";
import { type AuthMode, auth } from "../middleware/auth.js";

type UnaryCall = (request: never) => Promise<unknown>;

/** Query values arrive as strings; convert the ones whose field is not a string. */
function coerceQuery(input: DescMessage, query: Record<string, string | string[] | undefined>): JsonObject {
  const out: JsonObject = {};
  for (const field of input.fields) {
    const raw = query[field.name] ?? query[field.jsonName];
    if (raw === undefined) continue;
    const values = Array.isArray(raw) ? raw : [raw];
    const convert = (value: string): JsonValue => {
      if (field.fieldKind === "scalar" || field.fieldKind === "list") {
        const scalar = field.fieldKind === "scalar" ? field.scalar : field.scalar;
        if (scalar === 8 /* BOOL */) {
          if (value === "true" || value === "1") return true;
          if (value === "false" || value === "0" || value === "") return false;
          throw new HttpError(400, "invalid_request", `query parameter ${field.name} must be true or false`, {
            field: field.name,
          });
        }
      }
      return value;
    };
    out[field.name] =
      field.fieldKind === "list" ? values.flatMap((v) => v.split(",")).map(convert) : convert(values[0] as string);
  }
  return out;
}

export function rpcHandler(method: DescMethodUnary, call: UnaryCall) {
  return async (ctx: RouterContext) => {
    const merged: JsonObject = {
      ...coerceQuery(method.input, ctx.query),
      ...objectBody(ctx),
      ...ctx.params,
    };
    let request: unknown;
    try {
      request = fromJson(method.input, merged, { ignoreUnknownFields: true });
    } catch (err) {
      throw new HttpError(
        400,
        "invalid_request",
        (err as Error).message.replace(/^cannot decode message [\w.]+ from JSON: /, ""),
      );
    }
    const response = await call(request as never);
    ctx.body = toJson(method.output, response as never, { useProtoFieldName: true });
  };
}

export type Verb = "get" | "post" | "put" | "patch" | "delete";
/** [verb, path, auth form, RPC name (the client's method name)] */
export type RpcRoute = [Verb, string, AuthMode, string];

/** Mounts generic rows; a row naming an unknown RPC, or a path parameter its request lacks, fails at start. */
export function mountRpcRoutes(router: Router, deps: AppDeps, service: DescService, client: object, rows: RpcRoute[]): void {
  const calls = client as Record<string, (req: never) => Promise<unknown>>;
  for (const [verb, path, mode, rpc] of rows) {
    const method = service.method[rpc] as DescMethodUnary | undefined;
    const call = calls[rpc];
    if (!method || !call) throw new Error(`route ${verb.toUpperCase()} ${path}: ${service.typeName} has no RPC ${rpc}`);
    for (const param of path.matchAll(/:(\w+)/g)) {
      if (!method.input.fields.some((f) => f.name === param[1])) {
        throw new Error(`route ${verb.toUpperCase()} ${path}: ${method.input.typeName} has no field ${param[1]}`);
      }
    }
    router[verb](path, auth(deps.clients.identity, mode), rpcHandler(method, call.bind(client)));
  }
}
