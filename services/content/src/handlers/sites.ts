/**
 * Site records. Creating one checks the URL (http or https, a public address, or one
 * CONTENT_OUTBOUND_ALLOW names) and queues its crawl (crawl-queue.ts); the record is the owner's to
 * read, recrawl and delete in any status. The public view by domain shows only live public records.
 */
import { fromJson, type JsonObject, type JsonValue, type MessageInitShape } from "@bufbuild/protobuf";
import { ListValueSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { invalidArgument, notFound } from "@toolport/kit/errors";
import { type AddressPolicy, checkOutboundUrl } from "@toolport/kit/outbound";
import { Visibility } from "@toolport/proto/toolport/common/v1/types_pb";
import type { ContentService } from "@toolport/proto/toolport/content/v1/content_service_pb";
import type { SiteSchema } from "@toolport/proto/toolport/content/v1/sites_pb";
import { getDomain } from "tldts";
import type { SiteRow, SiteStore } from "../store/sites.js";
import { caller, isId, ts } from "./common.js";

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

const siteNotFound = (id: string) => notFound("site_not_found", `site ${id} not found`, { details: { site_id: id } });
const bad = (field: string, reason: string, message: string) =>
  invalidArgument(reason, `${field}: ${message}`, { details: { field } });

/** The registrable domain of a host (example.com for www.example.com); an IP or a single label as it is. */
export function registrableDomain(host: string): string {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  return getDomain(h) ?? h;
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

async function checkSiteUrl(raw: string, policy: AddressPolicy): Promise<URL> {
  const url = await checkOutboundUrl(raw, { policy, protocols: ["https:", "http:"], whyPublic: "only public sites are crawled" });
  url.hash = "";
  return url;
}

export function siteHandlers(deps: SiteDeps): Impl {
  const { sites } = deps;
  const mine = async (ownerId: string, id: string) => {
    const site = isId(id) ? await sites.get(id) : null;
    if (!site || site.owner_id !== ownerId) throw siteNotFound(id);
    return site;
  };

  return {
    async getSiteByDomain(req) {
      const domain = registrableDomain(req.domain);
      const site = domain ? await sites.liveByDomain(domain) : null;
      if (!site)
        throw notFound("site_not_found", `no live public site record for ${req.domain}`, { details: { domain: req.domain } });
      return { site: siteMessage(site) };
    },

    async createSite(req, context) {
      const me = caller(context);
      const visibility = req.visibility?.trim() || "public";
      if (visibility !== "public" && visibility !== "private")
        throw bad("visibility", "invalid_request", "must be public or private");
      const url = await checkSiteUrl(req.url, deps.policy);
      const site = await sites.create(me.accountId, url.toString(), registrableDomain(url.hostname), visibility);
      deps.wake();
      return { site: siteMessage(site) };
    },

    async getSite(req, context) {
      return { site: siteMessage(await mine(caller(context).accountId, req.siteId)) };
    },

    async listMySites(_req, context) {
      return { sites: (await sites.listMine(caller(context).accountId)).map(siteMessage) };
    },

    async recrawlSite(req, context) {
      const me = caller(context);
      if (!isId(req.siteId)) throw siteNotFound(req.siteId);
      const site = await sites.recrawl(me.accountId, req.siteId);
      if (!site) throw siteNotFound(req.siteId);
      deps.wake();
      return { site: siteMessage(site) };
    },

    async deleteSite(req, context) {
      const me = caller(context);
      if (!isId(req.siteId) || !(await sites.delete(me.accountId, req.siteId))) throw siteNotFound(req.siteId);
      return { deleted: true };
    },
  };
}
