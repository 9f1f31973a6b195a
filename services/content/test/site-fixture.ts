/**
 * The small multi-page site the crawler tests (crawl.test.ts) and the end-to-end test of site records
 * (test/e2e/content-sites.test.ts) both crawl, and the facts it must give: one home for both.
 */
import { readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { SiteFacts } from "../src/sites/crawl.js";

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const fixture = (name: string) => readFileSync(new URL(`./fixtures/site/${name}`, import.meta.url));
export const send =
  (type: string, body: string | Buffer, status = 200): Handler =>
  (_req, res) =>
    res.writeHead(status, { "content-type": type }).end(body);
export const html = (body: string | Buffer) => send("text/html; charset=utf-8", body);

/** The site's routes: its pages, robots.txt (ToolportBot may not read /members), OpenAPI, llms.txt, MCP. */
export function fixtureSiteRoutes(): Record<string, Handler> {
  return {
    "/start": (_req, res) => res.writeHead(302, { location: "/" }).end(),
    "/": html(fixture("index.html")),
    "/about": html(fixture("about.html")),
    "/services": html(fixture("services.html")),
    "/pricing": html(fixture("pricing.html")),
    "/docs/": html(fixture("docs.html")),
    "/faq": html(fixture("faq.html")),
    "/contact": html(fixture("contact.html")),
    "/terms": html(fixture("terms.html")),
    "/privacy": html(fixture("privacy.html")),
    "/members": html(fixture("members.html")),
    "/blog/launch": html(fixture("launch.html")),
    "/report": send("application/pdf", "%PDF-1.4"),
    "/robots.txt": send("text/plain", fixture("robots.txt")),
    "/openapi.json": send("application/json", fixture("openapi.json")),
    "/specs/openapi.yaml": send("application/yaml", fixture("specs/openapi.yaml")),
    "/llms.txt": send("text/plain; charset=utf-8", fixture("llms.txt")),
    "/.well-known/mcp.json": send("application/json", fixture(".well-known/mcp.json")),
  };
}

/**
 * What crawling `<b>/start` gives. `catalogService` is the catalog service the crawl was told about
 * (the crawler test stubs one; the end-to-end stack has none on the test's domain).
 */
export function expectedFixtureFacts(b: string, catalogService?: { id: string; name: string }): SiteFacts {
  const facts: SiteFacts = {
    url: `${b}/`,
    domain: "127.0.0.1",
    pageTitle: "Acme Weather API – forecasts for developers",
    pageDescription: "Weather forecasts and historical data through a simple REST API, SDKs and an MCP server.",
    components: {
      contact: {
        // JSON-LD and mailto: of the home page first, then the contact page's text.
        emails: ["hello@acme-weather.test", "support@acme-weather.test", "sales@acme-weather.test"],
        phones: ["+442079460000", "+442079460001"],
        address: "1 Cloud Street, London, EC1A 1BB, GB",
        page: `${b}/contact`,
      },
      about: {
        page: `${b}/about`,
        summary:
          "Acme Weather was founded in 2019 by two meteorologists who wanted weather data to be as easy to use as a clock.",
      },
      services: { page: `${b}/services`, items: ["Forecast API", "Historical data", "Custom climate models"] },
      docs: { page: `${b}/docs/` },
      pricing: { page: `${b}/pricing`, plans: ["Free", "Developer", "Enterprise"] },
      faq: {
        page: `${b}/faq`,
        questions: [
          "Do you offer an SLA?",
          "Is there a free plan?",
          "How accurate are the forecasts?",
          "Can I cancel at any time?",
        ],
      },
      legal: { terms: `${b}/terms`, privacy: `${b}/privacy` },
      navigation: [
        { label: "Home", url: `${b}/` },
        { label: "About", url: `${b}/about` },
        { label: "Services", url: `${b}/services` },
        { label: "Pricing", url: `${b}/pricing` },
        { label: "Docs", url: `${b}/docs/` },
        { label: "FAQ", url: `${b}/faq` },
        { label: "Contact us", url: `${b}/contact` },
        { label: "Members", url: `${b}/members` },
        { label: "GitHub", url: "https://github.com/acme-weather" },
      ],
    },
    discoveredTools: [
      { type: "openapi", url: `${b}/openapi.json`, title: "Acme Weather API" },
      { type: "openapi", url: `${b}/specs/openapi.yaml`, title: "Acme Weather API (YAML edition)" },
      { type: "llms_txt", url: `${b}/llms.txt` },
      { type: "mcp", url: `${b}/mcp`, name: "Acme Weather MCP" },
      { type: "catalog_service", service_id: "svc_acme_weather", name: "Acme Weather" },
    ],
    category: "developer-tools",
    tags: ["api", "weather", "data", "forecast", "historical", "acme", "developers", "forecasts", "billing", "cancel"],
    pagesCrawled: [
      `${b}/`,
      `${b}/about`,
      `${b}/services`,
      `${b}/pricing`,
      `${b}/docs/`,
      `${b}/faq`,
      `${b}/contact`,
      `${b}/terms`,
      `${b}/privacy`,
      `${b}/blog/launch`,
    ],
    skipped: [
      { url: `${b}/members`, reason: "robots", detail: "robots.txt disallows it for ToolportBot" },
      { url: `${b}/old-page`, reason: "error", detail: "HTTP 404" },
      { url: `${b}/report`, reason: "not_html", detail: "Content-Type application/pdf" },
    ],
    truncated: false,
  };
  facts.discoveredTools = facts.discoveredTools.filter((t) => t.type !== "catalog_service");
  if (catalogService)
    facts.discoveredTools.push({ type: "catalog_service", service_id: catalogService.id, name: catalogService.name });
  return facts;
}
