/** Site records over RPC: proto in, the use case (domain/sites.ts), proto out. */
import { fromJson, type JsonObject, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { ListValueSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { AddressPolicy } from "@toolport/kit/outbound";
import { Visibility } from "@toolport/proto/toolport/common/v1/types_pb";
import type { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import type { SiteSchema } from "@toolport/proto/toolport/content/v1/sites_pb";
import type { SiteRow } from "../domain/model.js";
import type { SiteStore } from "../domain/ports.js";
import { Sites } from "../domain/sites.js";
import { caller, ts } from "./common.js";

type Impl = Pick<
  ServiceImpl<typeof ContentService>,
  "getSiteByDomain" | "createSite" | "getSite" | "listMySites" | "recrawlSite" | "deleteSite"
>;

export interface SiteDeps {
  sites: SiteStore;
  policy: AddressPolicy;
  /** Wakes the crawl queue of this process. */
  wake(): void;
}

export function siteMessage(s: SiteRow): MessageInitShape<typeof SiteSchema> {
  return {
    id: s.id,
    domain: s.domain,
    url: s.url,
    status: s.status,
    visibility: s.visibility === "public" ? Visibility.PUBLIC : Visibility.PRIVATE,
    pageTitle: s.page_title,
    pageDescription: s.page_description,
    components: s.components as JsonObject,
    discoveredTools: fromJson(ListValueSchema, s.discovered_tools as JsonValue[]),
    category: s.category,
    tags: s.tags,
    createdAt: ts(s.created_at),
    updatedAt: ts(s.updated_at),
    ownerId: s.owner_id,
    error: s.error ?? undefined,
    crawledAt: ts(s.crawled_at),
  };
}

export function siteHandlers(deps: SiteDeps): Impl {
  const sites = new Sites(deps);
  return {
    async getSiteByDomain(req) {
      return { site: siteMessage(await sites.byDomain(req.domain)) };
    },

    async createSite(req, context) {
      return { site: siteMessage(await sites.create(caller(context), req)) };
    },

    async getSite(req, context) {
      return { site: siteMessage(await sites.mine(caller(context), req.siteId)) };
    },

    async listMySites(_req, context) {
      return { sites: (await sites.listMine(caller(context))).map(siteMessage) };
    },

    async recrawlSite(req, context) {
      return { site: siteMessage(await sites.recrawl(caller(context), req.siteId)) };
    },

    async deleteSite(req, context) {
      await sites.delete(caller(context), req.siteId);
      return { deleted: true };
    },
  };
}
