/**
 * What one HTML page says, read with cheerio (parse5 underneath, the HTML standard's parsing rules):
 * title and descriptions, JSON-LD, links, the main navigation, contact details, and the headings,
 * paragraphs, questions and list items of its main content. The site record is assembled from these
 * facts (components.ts); this file knows HTML, not records.
 *
 * "Main content" is `<main>` (or `role=main`) when the page has one, else `<body>` without its
 * `<nav>`, `<header>`, `<footer>` and `<aside>`. Text is what a reader sees: scripts, styles and
 * templates left out, block elements apart from each other, whitespace collapsed.
 */
import * as cheerio from "cheerio";
import { collapse, emailsInText, emailsOfMailto, normalisePhone } from "./contact.js";
import { flattenJsonLd, type JsonLdNode } from "./jsonld.js";
import { normaliseUrl } from "./urls.js";

export interface PageLink {
  /** Normalised (no fragment). */
  url: URL;
  /** The link's text, or its aria-label, title or image alt when it has none. */
  text: string;
}

export interface NavLink {
  label: string;
  /** Absolute, fragment kept (a one-page site's navigation is made of fragments). */
  url: string;
}

export interface PageFacts {
  title: string | null;
  metaDescription: string | null;
  ogTitle: string | null;
  ogDescription: string | null;
  jsonLd: JsonLdNode[];
  /** http(s) links (`<a>`, `<area>`), in document order, at most 1000. */
  links: PageLink[];
  /** `<link rel="service-desc">` targets (RFC 8631: a machine-readable description of the service). */
  serviceDescLinks: URL[];
  /** The main navigation's links, deduplicated by URL, in order. */
  navigation: NavLink[];
  /** Addresses of mailto: links, record form. */
  mailtoEmails: string[];
  /** Numbers of tel: links, record form. */
  telPhones: string[];
  /** Addresses written in the page's visible text. */
  textEmails: string[];
  /** The texts of `<address>` elements. */
  addresses: string[];
  /** Headings of the main content. */
  headings: { level: number; text: string }[];
  /** The first non-empty paragraph of the main content. */
  firstParagraph: string | null;
  /** Question-like texts of the main content: `<dt>`, `<summary>`, headings ending in "?". */
  questions: string[];
  /** Texts of list items of the main content that hold no nested list, at most 120 characters. */
  listItems: string[];
}

const MAX_LINKS = 1000;
/** Headings, questions and list items kept per page at most. */
const MAX_TEXTS = 200;
/** Elements whose content is not shown as text. */
const NOT_RENDERED = new Set(["script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "head"]);
/** Elements whose text stands apart from its neighbours' ("<p>a</p><p>b</p>" reads "a b", not "ab"). */
const BLOCKS = new Set(
  (
    "address article aside blockquote br button dd details dialog div dl dt fieldset figcaption figure footer form " +
    "h1 h2 h3 h4 h5 h6 header hgroup hr li main nav ol option p pre section summary table tbody td th thead tr ul"
  ).split(" "),
);
/** Landmarks that are not the page's content when it has no `<main>`. */
const CHROME = new Set(["nav", "header", "footer", "aside"]);
const CHROME_ROLES = new Set(["navigation", "banner", "contentinfo", "complementary"]);

/**
 * The fields of cheerio's DOM nodes (domhandler's, which cheerio does not re-export) this file walks.
 * Walking them directly keeps a large page fast to read: cheerio's `closest()` and per-element
 * `find()` took over a minute on a 3 MB page.
 */
interface DomNode {
  /** "tag", "script", "style", "text", "comment", "root"... */
  type: string;
  /** Lower-case tag name, for elements. */
  name?: string;
  /** The text, for text nodes. */
  data?: string;
  attribs?: Record<string, string>;
  children?: DomNode[];
  parent?: DomNode | null;
}

type Selection = ReturnType<cheerio.CheerioAPI>;

const asNodes = (selection: Selection): DomNode[] => selection.toArray() as unknown as DomNode[];

/** Reads one HTML page. `charset` is the Content-Type's; the document's own `<meta charset>` is sniffed too. */
export function extractPage(body: Buffer, pageUrl: URL, charset?: string): PageFacts {
  const $ = cheerio.loadBuffer(body, { encoding: { transportLayerEncodingLabel: charset, defaultEncoding: "utf-8" } });
  const base = baseUrl($, pageUrl);
  const metas = asNodes($("meta[content]"));
  const meta = (key: string) =>
    nonEmpty(
      metas.find((m) => [m.attribs?.name, m.attribs?.property].some((k) => k?.trim().toLowerCase() === key))?.attribs?.content,
    );

  const links: PageLink[] = [];
  const mailtoEmails: string[] = [];
  const telPhones: string[] = [];
  for (const a of asNodes($("a[href], area[href]"))) {
    const href = (a.attribs?.href ?? "").trim();
    if (/^mailto:/i.test(href)) mailtoEmails.push(...emailsOfMailto(href));
    else if (/^tel:/i.test(href)) {
      const phone = normalisePhone(href);
      if (phone) telPhones.push(phone);
    } else if (links.length < MAX_LINKS) {
      const url = normaliseUrl(href, base);
      if (url) links.push({ url, text: labelOf(a) });
    }
  }

  const content = mainContent($);
  const headings = content("h1, h2, h3, h4, h5, h6")
    .map((h) => ({ level: Number(h.name!.slice(1)), text: visibleText(h) }))
    .filter((h) => h.text !== "")
    .slice(0, MAX_TEXTS);
  const questions = content("h1, h2, h3, h4, h5, h6, dt, summary")
    .map((el) => ({ tag: el.name, text: visibleText(el) }))
    .filter(({ tag, text }) => text !== "" && (tag === "dt" || tag === "summary" || text.endsWith("?")))
    .map(({ text }) => text)
    .slice(0, MAX_TEXTS);
  const listItems = content("li")
    .filter((li) => !hasDescendant(li, ["ul", "ol"]))
    .map(visibleText)
    .filter((t) => t !== "" && t.length <= 120)
    .slice(0, MAX_TEXTS);
  let firstParagraph: string | null = null;
  for (const p of content("p")) {
    const text = visibleText(p);
    if (text !== "") {
      firstParagraph = text;
      break;
    }
  }

  return {
    title: nonEmpty($("title").first().text()),
    metaDescription: meta("description"),
    ogTitle: meta("og:title"),
    ogDescription: meta("og:description"),
    jsonLd: readJsonLd($),
    links,
    serviceDescLinks: asNodes($("link[href][rel]"))
      .filter((l) => (l.attribs?.rel ?? "").toLowerCase().split(/\s+/).includes("service-desc"))
      .map((l) => normaliseUrl(l.attribs?.href ?? "", base))
      .filter((u): u is URL => u !== undefined),
    navigation: mainNavigation($, base),
    mailtoEmails,
    telPhones,
    textEmails: emailsInText(asNodes($("body")).map(visibleText).join(" ")),
    addresses: asNodes($("address")).map(visibleText).filter(Boolean),
    headings,
    firstParagraph,
    questions,
    listItems,
  };
}

/** `<base href>` when it is an http(s) URL, else the page's own URL. */
function baseUrl($: cheerio.CheerioAPI, pageUrl: URL): URL {
  const href = $("base[href]").first().attr("href");
  return (href && normaliseUrl(href, pageUrl)) || pageUrl;
}

/** The nodes of every parsable `application/ld+json` script; unparsable scripts are ignored. */
function readJsonLd($: cheerio.CheerioAPI): JsonLdNode[] {
  const nodes: JsonLdNode[] = [];
  $("script").each((_, el) => {
    const type = ($(el).attr("type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/ld+json") return;
    try {
      flattenJsonLd(JSON.parse($(el).text()), nodes);
    } catch {
      // A broken script says nothing; the rest of the page still counts.
    }
  });
  return nodes;
}

/**
 * The elements matching `selector` in the content area: `<main>` / `role=main` when there is one
 * (navigation inside it left out), else the body without the page's navigation, header, footer and asides.
 */
function mainContent($: cheerio.CheerioAPI): (selector: string) => DomNode[] {
  const [main] = asNodes($("main, [role=main]"));
  const [root] = main ? [main] : asNodes($("body"));
  const excluded = (node: DomNode) =>
    main ? isNavigation(node) : isNavigation(node) || CHROME.has(node.name ?? "") || CHROME_ROLES.has(roleOf(node));
  // The whole document is searched and the matches placed by walking up: cheerio's `find()` on a
  // selection is quadratic (15 s for 60,000 paragraphs), a document-wide query is not.
  const inContent = (el: DomNode) => {
    for (let n = el.parent; n; n = n.parent) {
      if (n === root) return true;
      if (excluded(n)) return false;
    }
    return false;
  };
  return (selector) => asNodes($(selector)).filter(inContent);
}

/**
 * The site's main navigation: the first `<nav>` / `role=navigation` labelled main or primary, else the
 * first inside the page header, else the first outside the footer; with none, the header's links.
 * Labels are link texts (or aria-label, title, image alt); links without a label are left out.
 */
function mainNavigation($: cheerio.CheerioAPI, base: URL): NavLink[] {
  const inFooter = (n: DomNode) => n.name === "footer" || roleOf(n) === "contentinfo";
  const inHeader = (n: DomNode) => n.name === "header" || roleOf(n) === "banner";
  const candidates = asNodes($("nav, [role=navigation]")).filter((n) => !hasAncestor(n, inFooter));
  const named = (n: DomNode) =>
    /\b(main|primary)\b/i.test([n.attribs?.["aria-label"], n.attribs?.id, n.attribs?.class].join(" "));
  const nav =
    candidates.find(named) ??
    candidates.find((n) => hasAncestor(n, inHeader)) ??
    candidates[0] ??
    asNodes($("header, [role=banner]"))[0];
  if (!nav) return [];
  const seen = new Set<string>();
  const out: NavLink[] = [];
  for (const a of descendants(nav, (n) => n.name === "a" && n.attribs?.href !== undefined)) {
    let url: URL;
    try {
      url = new URL((a.attribs?.href ?? "").trim(), base);
    } catch {
      continue;
    }
    const label = labelOf(a);
    if ((url.protocol !== "http:" && url.protocol !== "https:") || label === "" || seen.has(url.href)) continue;
    seen.add(url.href);
    out.push({ label, url: url.href });
  }
  return out;
}

/** A link's text, else its aria-label, title or first image's alt. */
function labelOf(a: DomNode): string {
  const [img] = descendants(a, (n) => n.name === "img" && !!n.attribs?.alt, 1);
  return (
    visibleText(a) ||
    collapse(a.attribs?.["aria-label"] ?? "") ||
    collapse(a.attribs?.title ?? "") ||
    collapse(img?.attribs?.alt ?? "")
  );
}

/** The text a reader sees in `node`: scripts, styles and templates left out, blocks apart, whitespace collapsed. */
function visibleText(node: DomNode): string {
  const parts: string[] = [];
  // An explicit stack: a deeply nested page must not exhaust the call stack.
  const stack: (DomNode | " ")[] = [node];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (next === " ") {
      parts.push(" ");
      continue;
    }
    if (next.type === "text") parts.push(next.data ?? "");
    if (!next.children || NOT_RENDERED.has(next.name ?? "")) continue;
    const block = BLOCKS.has(next.name ?? "");
    if (block) stack.push(" ");
    for (let i = next.children.length - 1; i >= 0; i--) stack.push(next.children[i]!);
    if (block) parts.push(" ");
  }
  return collapse(parts.join(""));
}

function isNavigation(node: DomNode): boolean {
  return node.name === "nav" || roleOf(node) === "navigation";
}

function roleOf(node: DomNode): string {
  return (node.attribs?.role ?? "").trim().toLowerCase();
}

/** Whether an ancestor of `node` satisfies `test`. */
function hasAncestor(node: DomNode, test: (n: DomNode) => boolean): boolean {
  for (let n = node.parent; n; n = n.parent) if (test(n)) return true;
  return false;
}

/** The descendants of `node` that satisfy `test`, in document order, at most `max`. */
function descendants(node: DomNode, test: (n: DomNode) => boolean, max = Number.POSITIVE_INFINITY): DomNode[] {
  const found: DomNode[] = [];
  const stack = [...(node.children ?? [])].reverse();
  while (stack.length > 0 && found.length < max) {
    const next = stack.pop()!;
    if (test(next)) found.push(next);
    for (let i = (next.children?.length ?? 0) - 1; i >= 0; i--) stack.push(next.children![i]!);
  }
  return found;
}

function hasDescendant(node: DomNode, names: string[]): boolean {
  return descendants(node, (n) => names.includes(n.name ?? ""), 1).length > 0;
}

function nonEmpty(value: string | undefined): string | null {
  const text = collapse(value ?? "");
  return text === "" ? null : text;
}
