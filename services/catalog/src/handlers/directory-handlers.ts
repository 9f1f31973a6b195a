/** CatalogService's APIs.guru directory RPCs (platform admins): thin, proto in -> domain/directory.ts -> proto out. */
import type { ServiceImpl } from "@connectrpc/connect";
import { jsonBytes } from "@toolport/kit/json-bytes";
import type { CatalogService } from "@toolport/proto/toolport/catalog/v1/catalog_service_pb";
import type { CatalogDeps } from "../domain/deps.js";
import { importFromDirectory, listDirectory } from "../domain/directory.js";
import { callerOf } from "./caller.js";

type Impl = Pick<ServiceImpl<typeof CatalogService>, "listDirectory" | "importFromDirectory">;

export function createDirectoryHandlers(deps: CatalogDeps): Impl {
  return {
    async listDirectory(req, context) {
      const page = await listDirectory(
        deps,
        { query: req.query, category: req.category, limit: req.limit, offset: req.offset },
        callerOf(context),
      );
      return {
        installed: page.installed,
        version: page.version,
        totalEntries: page.totalEntries,
        matched: page.matched,
        limit: page.limit,
        offset: page.offset,
        entries: page.entries.map((e) => ({
          name: e.name,
          title: e.title,
          summary: e.summary,
          categories: e.categories,
          openapiVersion: e.openapi,
          operations: e.operations,
          bytes: BigInt(e.bytes),
          origin: e.origin,
          importedServiceId: e.importedServiceId ?? "",
          serviceName: e.serviceName,
        })),
        categories: page.categories,
        installCommand: page.installCommand,
        message: page.message,
      };
    },
    async importFromDirectory(req, context) {
      const timeout = context.timeoutMs();
      const { version, results } = await importFromDirectory(
        deps,
        { names: req.names, visibility: req.visibility },
        callerOf(context),
        // Start no new import past half the caller's deadline: the ones started by then can still finish.
        { budgetMs: timeout === undefined ? undefined : timeout / 2, signal: context.signal },
      );
      return {
        version,
        results: results.map((r) =>
          r.imported
            ? {
                name: r.name,
                imported: true,
                serviceId: r.serviceId,
                serviceName: r.serviceName,
                tools: r.tools,
                warnings: r.warnings,
              }
            : {
                name: r.name,
                imported: false,
                rpcCode: r.code,
                code: r.reason,
                message: r.message,
                detailsJson: jsonBytes(r.details),
              },
        ),
      };
    },
  };
}
