/**
 * Site records. Creating one checks the URL (http or https, a public address, or one
 * CONTENT_OUTBOUND_ALLOW names) and queues its crawl (crawl-queue.ts); the record is the owner's to
 * read, recrawl and delete in any status. The public view by domain shows only live public records.
 */
import { invalidArgument, notFound } from "@toolport/kit/errors";
import { type AddressPolicy, checkOutboundUrl } from "@toolport/kit/outbound";
import { getDomain } from "tldts";
import { type Caller, isId, type SiteRow } from "./model.js";
import type { SiteStore } from "./ports.js";

const siteNotFound = (id: string) => notFound("site_not_found", `site ${id} not found`, { details: { site_id: id } });

/** The registrable domain of a host (example.com for www.example.com); an IP or a single label as it is. */
export function registrableDomain(host: string): string {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  return getDomain(h) ?? h;
}

async function checkSiteUrl(raw: string, policy: AddressPolicy): Promise<URL> {
  const url = await checkOutboundUrl(raw, { policy, protocols: ["https:", "http:"], whyPublic: "only public sites are crawled" });
  url.hash = "";
  return url;
}

export class Sites {
  constructor(
    private readonly o: {
      sites: SiteStore;
      policy: AddressPolicy;
      /** Wakes the crawl queue of this process. */
      wake(): void;
    },
  ) {}

  /** The live public record of a domain (any host of it). */
  async byDomain(domainParam: string): Promise<SiteRow> {
    const domain = registrableDomain(domainParam);
    const site = domain ? await this.o.sites.liveByDomain(domain) : null;
    if (!site)
      throw notFound("site_not_found", `no live public site record for ${domainParam}`, { details: { domain: domainParam } });
    return site;
  }

  /** A record of the caller's, its crawl queued (public unless asked otherwise). */
  async create(me: Caller, req: { url: string; visibility?: string }): Promise<SiteRow> {
    const visibility = req.visibility?.trim() || "public";
    if (visibility !== "public" && visibility !== "private")
      throw invalidArgument("invalid_request", "visibility: must be public or private", { details: { field: "visibility" } });
    const url = await checkSiteUrl(req.url, this.o.policy);
    const site = await this.o.sites.create(me.accountId, url.toString(), registrableDomain(url.hostname), visibility);
    this.o.wake();
    return site;
  }

  /** The caller's own record, in any status. */
  async mine(me: Caller, id: string): Promise<SiteRow> {
    const site = isId(id) ? await this.o.sites.get(id) : null;
    if (!site || site.owner_id !== me.accountId) throw siteNotFound(id);
    return site;
  }

  listMine(me: Caller): Promise<SiteRow[]> {
    return this.o.sites.listMine(me.accountId);
  }

  async recrawl(me: Caller, id: string): Promise<SiteRow> {
    if (!isId(id)) throw siteNotFound(id);
    const site = await this.o.sites.recrawl(me.accountId, id);
    if (!site) throw siteNotFound(id);
    this.o.wake();
    return site;
  }

  async delete(me: Caller, id: string): Promise<void> {
    if (!isId(id) || !(await this.o.sites.delete(me.accountId, id))) throw siteNotFound(id);
  }
}
