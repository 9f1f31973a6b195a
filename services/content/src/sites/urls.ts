/**
 * Which URLs belong to the site being crawled, how they are normalised, and which of them are the
 * "component" pages a site record names (contact, about, pricing...). Pure functions: the crawl's link
 * filter is unit-tested through `crawlableLink`.
 */
import { getDomain, parse } from "tldts";

/**
 * The registrable domain of a host name, the unit "same site" is judged by: `www.example.co.uk` and
 * `docs.example.co.uk` are both `example.co.uk`. Private suffixes of the public suffix list count
 * (`alice.github.io` is its own site, not part of `github.io`). An IP host is its own domain (without
 * brackets for IPv6), `localhost` and `*.localhost` are `localhost`, and a host the list cannot place
 * (a single label such as `intranet`) is its own domain.
 */
export function siteDomain(hostname: string): string {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost")) return "localhost";
  if (parse(host).isIp) return host;
  return getDomain(host, { allowPrivateDomains: true }) ?? host;
}

/**
 * `href` resolved against `base` in the form the crawl compares URLs by: http(s) only, no fragment, no
 * empty `?`, host lower-cased and default port dropped (WHATWG URL does those two). Undefined for other
 * schemes (mailto:, tel:, javascript:, data:...), for URLs carrying credentials and for unparsable hrefs.
 */
export function normaliseUrl(href: string, base?: URL | string): URL | undefined {
  let url: URL;
  try {
    url = new URL(href.trim(), base);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  if (url.username !== "" || url.password !== "") return undefined;
  url.hash = "";
  if (url.search === "") url.search = "";
  return url;
}

/** Path endings that are never HTML pages: documents, media, archives, feeds, code and data files. */
const NOT_HTML = new Set([
  ...["pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", "rtf", "epub", "csv", "txt", "md"],
  ...["png", "jpg", "jpeg", "gif", "svg", "webp", "avif", "bmp", "ico", "tif", "tiff", "heic"],
  ...["mp3", "mp4", "m4a", "m4v", "mov", "avi", "mkv", "webm", "wav", "ogg", "flac"],
  ...["zip", "gz", "tgz", "tar", "bz2", "xz", "rar", "7z", "dmg", "exe", "msi", "apk", "iso", "bin", "deb", "rpm"],
  ...["css", "js", "mjs", "map", "json", "xml", "rss", "atom", "yaml", "yml", "woff", "woff2", "ttf", "otf", "eot"],
]);

/** True when the URL's path ends in an extension that is obviously not an HTML page (`.pdf`, `.png`...). */
export function isObviouslyNotHtml(url: URL): boolean {
  const last = url.pathname.split("/").pop() ?? "";
  const dot = last.lastIndexOf(".");
  return dot > 0 && NOT_HTML.has(last.slice(dot + 1).toLowerCase());
}

/**
 * The URL a link on a page of `domain` leads the crawl to, or undefined when the crawl ignores it:
 * another registrable domain, a non-http(s) scheme, credentials, or a path that is obviously not HTML.
 * Other subdomains of the same registrable domain are followed.
 */
export function crawlableLink(href: string, base: URL | string, domain: string): URL | undefined {
  const url = normaliseUrl(href, base);
  if (!url || siteDomain(url.hostname) !== domain || isObviouslyNotHtml(url)) return undefined;
  return url;
}

/** The kinds of page a site record points at, in the order a page matching several is classified by. */
export const PAGE_KINDS = ["contact", "about", "services", "docs", "pricing", "faq", "terms", "privacy"] as const;
export type PageKind = (typeof PAGE_KINDS)[number];

/** Path segments (lower-case, extension dropped) that mark a page of a kind. */
const PATH_WORDS: Record<PageKind, string[]> = {
  contact: ["contact", "contact-us", "contactus", "kontakt", "get-in-touch", "impressum"],
  about: ["about", "about-us", "aboutus", "company", "who-we-are", "our-story"],
  services: ["services", "our-services", "solutions", "what-we-do", "products"],
  docs: ["docs", "doc", "documentation", "developers", "developer", "api-docs", "api-reference", "reference"],
  pricing: ["pricing", "prices", "plans", "plans-and-pricing", "price", "rates"],
  faq: ["faq", "faqs", "frequently-asked-questions", "questions"],
  terms: ["terms", "tos", "terms-of-service", "terms-of-use", "terms-and-conditions", "conditions", "legal"],
  privacy: ["privacy", "privacy-policy", "privacy-notice", "data-protection", "gdpr"],
};

/** Link texts (lower-case, whitespace collapsed) that mark a page of a kind: whole text or its start. */
const TEXT_PHRASES: Record<PageKind, string[]> = {
  contact: ["contact", "contact us", "get in touch", "reach us"],
  about: ["about", "about us", "our story", "who we are", "company"],
  services: ["services", "our services", "solutions", "what we do"],
  docs: ["docs", "documentation", "developers", "developer docs", "api docs", "api reference"],
  pricing: ["pricing", "plans", "plans & pricing", "plans and pricing", "prices"],
  faq: ["faq", "faqs", "frequently asked questions", "questions"],
  terms: ["terms", "terms of service", "terms of use", "terms & conditions", "terms and conditions", "legal"],
  privacy: ["privacy", "privacy policy", "privacy notice", "data protection"],
};

/** Host labels that make a whole subdomain a documentation site (`docs.example.com`). */
const DOCS_HOSTS = new Set(["docs", "developer", "developers", "dev-docs"]);

/**
 * The kind of page a URL is, from its path: the last segment that names a kind wins (`/legal/privacy`
 * is privacy, `/company/contact` contact), then a docs subdomain. Undefined for any other page.
 */
export function kindOfUrl(url: URL): PageKind | undefined {
  const segments = url.pathname
    .toLowerCase()
    .split("/")
    .filter(Boolean)
    .map((s) => safeDecode(s).replace(/\.(html?|php|aspx?)$/, ""));
  for (let i = segments.length - 1; i >= 0; i--) {
    const kind = PAGE_KINDS.find((k) => PATH_WORDS[k].includes(segments[i]!));
    if (kind) return kind;
  }
  const label = url.hostname.toLowerCase().split(".")[0] ?? "";
  return DOCS_HOSTS.has(label) && segments.length === 0 ? "docs" : undefined;
}

/** The kind of page a link's text announces ("Contact us", "Pricing", "Privacy policy"), if any. */
export function kindOfText(text: string): PageKind | undefined {
  const t = text.toLowerCase().replace(/\s+/g, " ").trim();
  if (t === "" || t.length > 40) return undefined;
  return PAGE_KINDS.find((k) => TEXT_PHRASES[k].some((p) => t === p || t.startsWith(`${p} `)));
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
