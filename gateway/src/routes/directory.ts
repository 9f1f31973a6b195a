/**
 * /v1/directory: the APIs.guru directory installed beside the catalog, for platform admins (the catalog
 * refuses anyone else with 403 platform_admin_only). The list is a page of entries; an import answers one
 * result per name, each either imported or refused with the status, code and message it would have had on
 * its own. The catalog's domain/directory.ts has the rules.
 */
import type { JsonObject, JsonValue } from "@bufbuild/protobuf";
import type { Code } from "@connectrpc/connect";
import { objectFromJsonBytes } from "@toolport/kit/json-bytes";
import type { AppDeps } from "../deps.js";
import { httpStatusFor } from "../http/errors.js";
import { fieldError, objectBody, queryValue, rangeQuery } from "../http/input.js";
import { auth } from "../middleware/auth.js";
import type { DescribedRouter } from "../openapi/describe.js";
import { directoryOps as ops } from "../openapi/operations/directory.js";

export function directoryRoutes(api: DescribedRouter, deps: AppDeps): void {
  const catalog = deps.clients.catalog;
  const admin = auth(deps.clients.identity, "api_key_or_jwt");

  api.get("/directory", ops.listDirectory, admin, async (ctx) => {
    const page = await catalog.listDirectory({
      query: queryValue(ctx, "query") ?? queryValue(ctx, "q") ?? "",
      category: queryValue(ctx, "category") ?? "",
      limit: rangeQuery(ctx, "limit", 1, 100),
      offset: rangeQuery(ctx, "offset", 0, 1_000_000),
    });
    ctx.body = {
      installed: page.installed,
      version: page.version,
      total_entries: page.totalEntries,
      matched: page.matched,
      limit: page.limit,
      offset: page.offset,
      entries: page.entries.map((e) => ({
        name: e.name,
        title: e.title,
        summary: e.summary,
        categories: e.categories,
        openapi_version: e.openapiVersion,
        origin: e.origin,
        operations: e.operations,
        bytes: Number(e.bytes),
        service_name: e.serviceName,
        imported: e.importedServiceId !== "",
        imported_service_id: e.importedServiceId || null,
      })),
      categories: page.categories.map((c) => ({ name: c.name, count: c.count })),
      install_command: page.installCommand || null,
      message: page.message || null,
    } satisfies JsonObject;
  });

  api.post("/directory/import", ops.importFromDirectory, admin, async (ctx) => {
    const body = objectBody(ctx);
    const names = body.names;
    if (!Array.isArray(names) || names.length === 0 || names.some((n) => typeof n !== "string")) {
      throw fieldError("names", 'names must be a non-empty array of directory names, e.g. ["stripe.com"]', "invalid_names");
    }
    const visibility = body.visibility;
    if (visibility !== undefined && visibility !== null && typeof visibility !== "string") {
      throw fieldError("visibility", "visibility must be public or private", "invalid_visibility");
    }
    const res = await catalog.importFromDirectory(
      { names: names as string[], visibility: visibility ?? "" },
      { timeoutMs: deps.config.PUBLISH_TIMEOUT_MS },
    );
    const results = res.results.map(
      (r): JsonObject =>
        r.imported
          ? {
              name: r.name,
              status: "imported",
              service_id: r.serviceId,
              service_name: r.serviceName,
              tools: r.tools,
              warnings: r.warnings,
            }
          : {
              name: r.name,
              status: "refused",
              error: {
                status: httpStatusFor(r.rpcCode as Code, r.code),
                code: r.code,
                message: r.message,
                details: objectFromJsonBytes(r.detailsJson),
              },
            },
    );
    ctx.body = {
      version: res.version,
      imported: res.results.filter((r) => r.imported).length,
      refused: res.results.filter((r) => !r.imported).length,
      results: results as JsonValue,
    } satisfies JsonObject;
  });
}
