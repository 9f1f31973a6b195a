/**
 * Related-term expansion: a small, general-purpose table of words and phrases that name the same
 * thing, written from general knowledge of how people and API authors describe tools (not mined from
 * any query set). A query that says "text message" also looks for "sms"; the added terms weigh less
 * than the words the caller typed (see EmbeddedEngine's `expansionWeight`).
 */
import { terms } from "./text.js";

export const synonymGroups: readonly (readonly string[])[] = [
  ["sms", "text message", "texting", "text messages"],
  ["email", "e-mail", "mail", "inbox"],
  ["phone", "telephone", "mobile number", "phone number", "cell phone"],
  ["call", "dial", "voice call"],
  ["chat", "messaging", "instant message"],
  ["notification", "alert", "notify"],
  ["weather", "forecast", "meteorological"],
  ["movie", "film", "cinema"],
  ["tv", "television", "tv show", "series"],
  ["music", "song", "songs", "audio"],
  ["lyrics", "song text"],
  ["podcast", "episode"],
  ["image", "picture", "photo", "photograph"],
  ["video", "clip", "footage"],
  ["news", "headline", "headlines", "article"],
  ["stock", "shares", "equity", "ticker"],
  ["crypto", "cryptocurrency", "coin", "token"],
  ["currency", "forex", "exchange rate", "fx"],
  ["translate", "translation", "translator"],
  ["language", "lang", "locale"],
  ["recipe", "cooking", "dish", "meal"],
  ["food", "cuisine", "meal"],
  ["restaurant", "dining", "eatery"],
  ["hotel", "accommodation", "lodging"],
  ["flight", "airline", "airfare", "plane"],
  ["airport", "airfield"],
  ["train", "railway", "rail"],
  ["travel", "trip", "journey", "tour"],
  ["vacation", "holiday"],
  ["car", "vehicle", "automobile", "auto"],
  ["vin", "vehicle identification number"],
  ["license plate", "number plate", "registration plate"],
  ["job", "career", "employment", "vacancy"],
  ["address", "street address", "location"],
  ["geocode", "geocoding", "coordinates", "latitude longitude"],
  ["map", "maps", "geolocation"],
  ["ip", "ip address"],
  ["domain", "website", "site", "url"],
  ["company", "business", "firm", "enterprise"],
  ["football", "soccer"],
  ["sport", "sports", "athletics"],
  ["player", "athlete"],
  ["quote", "quotation", "saying"],
  ["joke", "humor", "funny"],
  ["shorten", "url shortener", "short link"],
  ["qr code", "qrcode"],
  ["password", "passphrase"],
  ["verify", "validate", "validation", "verification"],
  ["convert", "conversion", "converter"],
  ["calculate", "calculation", "calculator", "compute"],
  ["search", "lookup", "look up"],
  ["price", "pricing", "cost", "fee"],
  ["review", "rating", "feedback"],
  ["user", "account", "profile"],
  ["tweet", "twitter"],
  ["pdf", "document"],
  ["nutrition", "calorie", "calories", "nutrient"],
  ["health", "medical", "medicine"],
  ["horoscope", "zodiac", "astrology"],
  ["lottery", "lotto"],
  ["betting", "bet", "odds", "wager"],
  ["anime", "manga"],
  ["earthquake", "seismic", "quake"],
  ["timezone", "time zone"],
  ["country", "nation"],
  ["city", "town"],
  ["zip code", "postal code", "postcode", "zipcode", "zip"],
  ["real estate", "property", "housing"],
  ["mortgage", "loan"],
  ["tax", "vat"],
  ["invoice", "bill", "billing"],
  ["payment", "pay", "transaction"],
  ["bank", "banking"],
  ["shop", "store", "shopping", "ecommerce"],
  ["coupon", "discount", "promo code", "voucher"],
  ["shipping", "shipment", "delivery", "parcel", "package tracking"],
  ["cocktail", "drink", "beverage"],
  ["pet", "animal"],
  ["dictionary", "definition", "meaning"],
  ["synonym", "thesaurus"],
  ["trivia", "fact", "facts"],
  ["emoji", "emoticon"],
  ["gif", "animation"],
  ["face", "facial"],
  ["ocr", "text recognition", "text extraction"],
  ["summarize", "summary", "summarization"],
  ["sentiment", "emotion", "opinion"],
  ["spam", "junk"],
  ["bus", "transit", "public transport"],
  ["nft", "non-fungible token"],
  ["event", "concert", "festival"],
  ["ticket", "booking", "reservation"],
  ["university", "college", "school"],
  ["book", "novel", "ebook"],
  ["population", "demographic", "census"],
  ["social media", "social network"],
  ["cryptocurrency wallet", "crypto wallet"],
  ["temperature", "degrees"],
];

/** Stemmed term sequences of each group member, indexed by their first term. */
interface Phrase {
  terms: string[];
  group: number;
}
const phrasesByFirstTerm = new Map<string, Phrase[]>();
const groupTerms: string[][][] = synonymGroups.map((group, index) => {
  const members = group.map((member) => terms(member)).filter((t) => t.length > 0);
  for (const t of members) {
    const list = phrasesByFirstTerm.get(t[0] as string) ?? [];
    list.push({ terms: t, group: index });
    phrasesByFirstTerm.set(t[0] as string, list);
  }
  return members;
});

/**
 * Terms related to a query's terms (already stemmed, in order) that the query does not contain, with a
 * weight each: a phrase member's terms share one unit of weight, so "text message" added for "sms"
 * weighs like one added word. A group reached through a phrase of several words ("text message") is
 * multiplied by `phraseBoost`: a phrase is unambiguous where a single word ("text") is not.
 */
export function relatedTerms(queryTerms: readonly string[], phraseBoost = 1): Map<string, number> {
  const related = new Map<string, number>();
  for (const [t, { weight }] of relatedTermSources(queryTerms, phraseBoost)) related.set(t, weight);
  return related;
}

/**
 * `relatedTerms`, each with the typed phrases (stemmed terms) that reached its group: a text that
 * holds one of those already says the same thing in the caller's words.
 */
export function relatedTermSources(
  queryTerms: readonly string[],
  phraseBoost = 1,
): Map<string, { weight: number; sources: string[][] }> {
  const groups = new Map<number, { boost: number; sources: string[][] }>();
  for (let i = 0; i < queryTerms.length; i++) {
    for (const phrase of phrasesByFirstTerm.get(queryTerms[i] as string) ?? []) {
      if (phrase.terms.every((t, j) => queryTerms[i + j] === t)) {
        const boost = phrase.terms.length > 1 ? phraseBoost : 1;
        const group = groups.get(phrase.group);
        if (group) {
          group.boost = Math.max(group.boost, boost);
          group.sources.push(phrase.terms);
        } else groups.set(phrase.group, { boost, sources: [phrase.terms] });
      }
    }
  }
  const present = new Set(queryTerms);
  const related = new Map<string, { weight: number; sources: string[][] }>();
  for (const [group, { boost, sources }] of groups) {
    for (const member of groupTerms[group] as string[][]) {
      for (const t of member) {
        if (present.has(t)) continue;
        const weight = boost / member.length;
        const known = related.get(t);
        if (!known) related.set(t, { weight, sources: [...sources] });
        else {
          known.weight = Math.max(known.weight, weight);
          known.sources.push(...sources);
        }
      }
    }
  }
  return related;
}
