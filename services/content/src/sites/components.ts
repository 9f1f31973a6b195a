/**
 * The `components` of a site record, assembled from the facts of the pages crawled (extract.ts), in
 * crawl order (the start page first). A component page is the first crawled page of its kind: by its
 * path (`/pricing`, `/legal/privacy`, a `docs.` subdomain), else by the text of the link that led to it
 * ("Contact us"); see urls.ts for the words. A page that carries FAQPage JSON-LD is the FAQ page when no
 * page is one by path or link.
 */
import type { SiteComponents } from "./crawl.js";
import type { PageFacts } from "./extract.js";
import { addressesOf, emailsOf, faqQuestionsOf, phonesOf, typesOf } from "./jsonld.js";
import { kindOfText, kindOfUrl, type PageKind } from "./urls.js";

export interface CrawledPage {
  /** The URL that answered (after redirects), normalised. */
  url: URL;
  /** The text of the link the crawl followed to it; "" for the start page. */
  linkText: string;
  facts: PageFacts;
}

const SUMMARY_MAX = 300;
const MAX_ITEMS = 30;
const MAX_PLANS = 20;
const MAX_QUESTIONS = 50;
/** Words that make a pricing-page heading a section title rather than a plan name. */
const NOT_PLAN_WORDS = new Set([
  "pricing",
  "plans",
  "compare",
  "comparison",
  "faq",
  "faqs",
  "questions",
  "features",
  "contact",
  "choose",
]);

/** The components of a site; `pages[0]` is the start page. */
export function assembleComponents(pages: CrawledPage[]): SiteComponents {
  const kinds = pages.map((p, i) => kindOfUrl(p.url) ?? (i === 0 ? undefined : kindOfText(p.linkText)));
  const pageOf = (kind: PageKind) => pages[kinds.indexOf(kind)];
  const contact = pageOf("contact");
  const about = pageOf("about");
  const services = pageOf("services");
  const pricing = pageOf("pricing");
  const faq = pageOf("faq") ?? pages.find((p) => p.facts.jsonLd.some((n) => typesOf(n).includes("FAQPage")));

  return {
    contact: {
      emails: unique(
        pages.flatMap((p) => [
          ...p.facts.jsonLd.flatMap(emailsOf),
          ...p.facts.mailtoEmails,
          ...(p === contact ? p.facts.textEmails : []),
        ]),
      ),
      phones: unique(pages.flatMap((p) => [...p.facts.jsonLd.flatMap(phonesOf), ...p.facts.telPhones])),
      address:
        pages.flatMap((p) => p.facts.jsonLd.flatMap(addressesOf))[0] ??
        contact?.facts.addresses[0] ??
        pages.flatMap((p) => p.facts.addresses)[0] ??
        null,
      page: contact?.url.href ?? null,
    },
    about: {
      page: about?.url.href ?? null,
      summary: about?.facts.firstParagraph ? shorten(about.facts.firstParagraph, SUMMARY_MAX) : null,
    },
    services: { page: services?.url.href ?? null, items: services ? serviceItems(services.facts) : [] },
    docs: { page: pageOf("docs")?.url.href ?? null },
    pricing: { page: pricing?.url.href ?? null, plans: pricing ? planNames(pricing.facts) : [] },
    faq: {
      page: faq?.url.href ?? null,
      questions: faq ? unique([...faq.facts.jsonLd.flatMap(faqQuestionsOf), ...faq.facts.questions]).slice(0, MAX_QUESTIONS) : [],
    },
    legal: { terms: pageOf("terms")?.url.href ?? null, privacy: pageOf("privacy")?.url.href ?? null },
    navigation: pages[0]?.facts.navigation ?? [],
  };
}

/** What a services page offers: its h2/h3 headings, else its list items. */
function serviceItems(facts: PageFacts): string[] {
  const headings = facts.headings.filter((h) => h.level === 2 || h.level === 3).map((h) => h.text);
  return unique(headings.length > 0 ? headings : facts.listItems).slice(0, MAX_ITEMS);
}

/**
 * Plan names on a pricing page: h2-h4 headings of at most 5 words and 40 characters that are not a
 * question, a lead-in (ending in ":") or a section title (a word such as "pricing", "compare", "FAQ").
 */
function planNames(facts: PageFacts): string[] {
  const plans = facts.headings
    .filter((h) => h.level >= 2 && h.level <= 4)
    .map((h) => h.text)
    .filter((t) => t.length <= 40 && t.split(" ").length <= 5 && !/[?:]$/.test(t))
    .filter(
      (t) =>
        !t
          .toLowerCase()
          .split(/[^\p{L}\p{N}]+/u)
          .some((w) => NOT_PLAN_WORDS.has(w)),
    );
  return unique(plans).slice(0, MAX_PLANS);
}

/** `text` cut at a word boundary to at most `max` characters, an ellipsis marking the cut. */
export function shorten(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(" ");
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
