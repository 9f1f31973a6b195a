/**
 * Text analysis shared by the search engines: tokens, stop words, stems. Tool text and queries go
 * through the same steps, so a query word and a name word meet on the same stem.
 */
import { stemmer } from "stemmer";

/**
 * English function words: they occur everywhere, carry no topic, and in long queries would add a
 * little score to every document. Written from the usual English stop lists (Lucene, SMART).
 */
export const stopWords: ReadonlySet<string> = new Set(
  (
    "a about above after again against all am an and any are as at be because been before being below " +
    "between both but by did do does doing down during each few for from further had has have having he " +
    "her here hers herself him himself his how i if in into is it its itself just me more most my myself " +
    "no nor not now of off on once only or other our ours ourselves out over own same she should so some " +
    "such than that the their theirs them themselves then there these they this those through to too " +
    "under until up very was we were what when where which while who whom why will with you your yours " +
    "yourself yourselves im ive id ill youre its dont doesnt cant wont isnt arent s t m ll d ve re"
  ).split(" "),
);

/**
 * Words that phrase a request rather than name its topic ("Could you please provide me with..."),
 * dropped from queries only (a tool may legitimately be named "Get details"). Written from general
 * knowledge of how people ask for things, not from any query set.
 */
export const requestWords: ReadonlySet<string> = new Set(
  (
    "please could would can may might shall must also additionally furthermore moreover thanks thank " +
    "appreciate appreciated grateful want wanted wants need needs needed like love help helpful " +
    "provide provided give show tell let know interested planning plan trying looking hoping wondering " +
    "wonder curious kindly assist make sure sure possible able using use used one ones something anything " +
    "everything someone etc well really much many lot lots thing things way ways"
  ).split(" "),
);

/**
 * Stems that Porter gets wrong in ways that matter for tool text ("news" is not "new"). A Map, not an
 * object literal: a word such as "constructor" would otherwise find Object.prototype's function.
 */
const stemExceptions = new Map([
  ["news", "news"],
  ["sms", "sms"],
  ["gps", "gps"],
  ["ios", "ios"],
  ["dns", "dns"],
]);

const stemCache = new Map<string, string>();

/** The stem of one lowercase word; short words (acronyms, codes) are kept whole. */
export function stem(word: string): string {
  const cached = stemCache.get(word);
  if (cached !== undefined) return cached;
  const result = stemExceptions.get(word) ?? (word.length <= 3 || /\d/.test(word) ? word : stemmer(word));
  if (stemCache.size < 200_000) stemCache.set(word, result);
  return result;
}

/**
 * Lowercase words of a text: identifiers are split where their case changes (`getUserById` ->
 * get user by id) and on any character that is not a letter or digit (`send_sms`, `/v1/sms-send`).
 * Apostrophes are removed inside words so "I'm" is one word ("im").
 */
export function words(text: string): string[] {
  const cased = text
    .replace(/['\u2019]/g, "")
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase();
  // Most tool text is ASCII: it has no accents to strip, and a plain class splits it (a third of the cost).
  if (!/\P{ASCII}/u.test(cased)) return cased.split(/[^a-z0-9]+/).filter((w) => w.length > 0);
  const split = cased.normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
  return split.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);
}

/** Index terms of a text: words minus stop words, stemmed. Single letters are dropped, digits kept. */
export function terms(text: string): string[] {
  const out: string[] = [];
  for (const w of words(text)) {
    if (stopWords.has(w)) continue;
    if (w.length === 1 && !/\d/.test(w)) continue;
    out.push(stem(w));
  }
  return out;
}

/** Query terms: like `terms`, and the request phrasing ("could you please provide") dropped as well. */
export function queryTerms(text: string, dropRequestWords = true): string[] {
  const out: string[] = [];
  for (const w of words(text)) {
    if (stopWords.has(w) || (dropRequestWords && requestWords.has(w))) continue;
    if (w.length === 1 && !/\d/.test(w)) continue;
    out.push(stem(w));
  }
  return out;
}

/**
 * The values a request names, replaced by the kind of value they are: an email address by "email",
 * a web address by "url", a host name by "domain". A caller asks about `jenny@gmail.com`, not about
 * Gmail, and `apple.com` is a domain to look up, not Apple's API; the kind still says what the request
 * is about. Their dots would otherwise also split one sentence into several.
 */
export function withoutValues(query: string): string {
  return query
    .replace(/[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g, " email ")
    .replace(/\b(?:https?:\/\/|www\.)[^\s'"<>]*[^\s'"<>.,;:!?)]/gi, " url ")
    .replace(/\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|org|net|io|co|uk|de|fr|edu|gov|info|biz|app|dev|ai)\b/gi, " domain ");
}
