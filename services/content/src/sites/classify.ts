/**
 * A site's category and tags, computed from what it says about itself, deterministically (same input,
 * same output; no model, no randomness, no dependence on the order of equal scores).
 *
 * Category: one of CATEGORIES. Words are lower-cased and split on anything that is not a letter or a
 * digit; each word that is one of a category's keywords scores for it, 2 points in the title or
 * description and 1 in a heading or navigation label; each JSON-LD `@type` mapped to a category scores
 * 3. The highest score wins; equal scores go to the category listed first; a best score under 2 is
 * "other".
 *
 * Tags: up to 10 words of the title, description, headings and navigation labels: lower-case, at least
 * 3 characters, not only digits, not an English stopword or web boilerplate ("home", "contact",
 * "privacy"...); ordered by how often they occur, then alphabetically.
 */

export const CATEGORIES = [
  "developer-tools",
  "ecommerce",
  "finance",
  "travel",
  "health",
  "education",
  "media",
  "food",
  "real-estate",
  "government",
  "nonprofit",
  "other",
] as const;
export type SiteCategory = (typeof CATEGORIES)[number];

/** Keywords of each category (whole words, as written: no stemming, so "news" never matches "new"). */
const KEYWORDS: Record<Exclude<SiteCategory, "other">, string[]> = {
  "developer-tools": [
    ...["api", "apis", "sdk", "sdks", "developer", "developers", "code", "coding", "devops", "deploy", "deployment"],
    ...["cli", "git", "github", "database", "databases", "hosting", "cloud", "openapi", "webhook", "webhooks", "endpoint"],
    ...["endpoints", "integration", "integrations", "software", "saas", "programming", "opensource", "kubernetes"],
    ...["serverless", "debugging", "mcp", "graphql", "json"],
  ],
  ecommerce: [
    ...["shop", "shopping", "store", "cart", "checkout", "buy", "shipping", "order", "orders", "sale", "sales"],
    ...["discount", "marketplace", "retail", "apparel", "fashion", "furniture", "gifts", "ecommerce"],
  ],
  finance: [
    ...["bank", "banking", "payment", "payments", "invest", "investing", "investment", "investments", "loan", "loans"],
    ...["credit", "insurance", "accounting", "tax", "taxes", "crypto", "trading", "finance", "financial", "wallet"],
    ...["mortgage", "mortgages", "fintech", "invoice", "invoicing"],
  ],
  travel: [
    ...["travel", "hotel", "hotels", "flight", "flights", "booking", "trip", "trips", "tour", "tours", "vacation"],
    ...["vacations", "airline", "airlines", "destination", "destinations", "resort", "resorts", "cruise", "hostel"],
  ],
  health: [
    ...["health", "healthcare", "medical", "clinic", "clinics", "doctor", "doctors", "patient", "patients", "therapy"],
    ...["pharmacy", "wellness", "dental", "dentist", "hospital", "nurse", "nursing", "medicine", "fitness", "mental"],
  ],
  education: [
    ...["course", "courses", "learn", "learning", "school", "schools", "university", "college", "student", "students"],
    ...["teacher", "teachers", "education", "training", "tutorial", "tutorials", "classes", "curriculum", "academy"],
  ],
  media: [
    ...["news", "blog", "magazine", "podcast", "podcasts", "video", "videos", "music", "film", "films", "movie"],
    ...["movies", "streaming", "publisher", "publishing", "journalism", "articles", "radio", "entertainment"],
  ],
  food: [
    ...["restaurant", "restaurants", "food", "menu", "recipe", "recipes", "cafe", "coffee", "bakery", "catering"],
    ...["dining", "kitchen", "pizza", "grocery", "groceries", "meals", "chef", "wine", "brewery"],
  ],
  "real-estate": [
    ...["estate", "property", "properties", "homes", "apartment", "apartments", "rent", "rental", "rentals"],
    ...["realtor", "realty", "housing", "lease", "tenants", "landlord", "condo"],
  ],
  government: [...["government", "municipal", "ministry", "council", "federal", "county", "citizens", "permits", "parliament"]],
  nonprofit: [
    ...["nonprofit", "charity", "charities", "donate", "donation", "donations", "volunteer", "volunteers"],
    ...["foundation", "ngo", "fundraising", "philanthropy"],
  ],
};

/** JSON-LD types that name a category outright. */
const TYPES: Record<string, Exclude<SiteCategory, "other">> = {
  SoftwareApplication: "developer-tools",
  WebAPI: "developer-tools",
  SoftwareSourceCode: "developer-tools",
  Store: "ecommerce",
  OnlineStore: "ecommerce",
  BankOrCreditUnion: "finance",
  FinancialService: "finance",
  InsuranceAgency: "finance",
  TravelAgency: "travel",
  Hotel: "travel",
  LodgingBusiness: "travel",
  Airline: "travel",
  MedicalOrganization: "health",
  Hospital: "health",
  Physician: "health",
  Dentist: "health",
  Pharmacy: "health",
  EducationalOrganization: "education",
  CollegeOrUniversity: "education",
  School: "education",
  Course: "education",
  NewsMediaOrganization: "media",
  NewsArticle: "media",
  Blog: "media",
  BlogPosting: "media",
  Restaurant: "food",
  FoodEstablishment: "food",
  CafeOrCoffeeShop: "food",
  Bakery: "food",
  Recipe: "food",
  RealEstateAgent: "real-estate",
  RealEstateListing: "real-estate",
  GovernmentOrganization: "government",
  GovernmentOffice: "government",
  NGO: "nonprofit",
};

const STOPWORDS = new Set([
  // English function words and fillers.
  ...["the", "and", "for", "with", "you", "your", "yours", "our", "ours", "are", "was", "were", "this", "that", "from"],
  ...["have", "has", "had", "not", "but", "all", "can", "will", "just", "more", "most", "into", "out", "how", "what"],
  ...["when", "where", "who", "why", "which", "its", "their", "they", "them", "there", "here", "than", "then", "also"],
  ...["get", "use", "used", "using", "new", "one", "two", "any", "each", "other", "some", "such", "only", "own", "same"],
  ...["very", "over", "under", "again", "per", "via", "yes", "may", "might", "must", "should", "would", "could", "does"],
  ...["did", "doing", "been", "being", "these", "those", "both", "few", "off", "too", "now", "made", "make", "like"],
  ...["well", "way", "etc", "let", "lets", "don", "won", "every", "many", "much", "about", "after", "before"],
  ...["between", "because", "while", "during", "without", "within", "upon", "onto", "her", "his", "him", "she"],
  ...["through", "across", "around", "above", "below", "since", "until", "into", "among", "even", "ever", "still"],
  ...["start", "started", "today", "best", "free", "easy", "simple", "need", "needs", "want", "see", "find", "help"],
  // What every site's chrome says.
  ...["home", "homepage", "page", "pages", "welcome", "contact", "menu", "login", "logout", "log", "sign", "signin"],
  ...["signup", "register", "account", "privacy", "policy", "terms", "conditions", "cookie", "cookies", "legal"],
  ...["copyright", "rights", "reserved", "faq", "faqs", "frequently", "asked", "questions", "question", "pricing"],
  ...["plans", "blog", "docs", "documentation", "read", "click", "search", "skip", "main", "content", "navigation"],
  ...["back", "top", "next", "previous", "follow", "share", "subscribe", "newsletter", "email", "phone", "address"],
  ...["inc", "llc", "ltd", "gmbh", "company", "team", "careers", "support", "overview", "learn", "services", "service"],
  ...["products", "product", "features", "feature", "solutions", "resources", "info", "information", "website", "site"],
]);

export interface ClassifyInput {
  title: string;
  description: string;
  headings: string[];
  navLabels: string[];
  jsonLdTypes: string[];
}

/** Lower-case words: runs of letters and digits. */
function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

export function classifySite(input: ClassifyInput): { category: SiteCategory; tags: string[] } {
  return { category: categoryOf(input), tags: tagsOf(input) };
}

export function categoryOf(input: ClassifyInput): SiteCategory {
  const scores = new Map<SiteCategory, number>();
  const add = (category: SiteCategory, points: number) => scores.set(category, (scores.get(category) ?? 0) + points);
  const weighted: [string, number][] = [
    [input.title, 2],
    [input.description, 2],
    ...input.headings.map((h): [string, number] => [h, 1]),
    ...input.navLabels.map((l): [string, number] => [l, 1]),
  ];
  const entries = Object.entries(KEYWORDS) as [Exclude<SiteCategory, "other">, string[]][];
  for (const [text, points] of weighted) {
    for (const word of words(text)) {
      for (const [category, keywords] of entries) if (keywords.includes(word)) add(category, points);
    }
  }
  for (const type of new Set(input.jsonLdTypes)) {
    const category = TYPES[type];
    if (category) add(category, 3);
  }
  let best: SiteCategory = "other";
  let bestScore = 1;
  for (const category of CATEGORIES) {
    const score = scores.get(category) ?? 0;
    if (score > bestScore) {
      best = category;
      bestScore = score;
    }
  }
  return best;
}

export function tagsOf(input: ClassifyInput, max = 10): string[] {
  const counts = new Map<string, number>();
  for (const text of [input.title, input.description, ...input.headings, ...input.navLabels]) {
    for (const word of words(text)) {
      if (word.length < 3 || /^\p{N}+$/u.test(word) || STOPWORDS.has(word)) continue;
      counts.set(word, (counts.get(word) ?? 0) + 1);
    }
  }
  return [...counts]
    .sort(([a, ca], [b, cb]) => cb - ca || (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, max)
    .map(([word]) => word);
}
