/**
 * The forms a site record keeps contact details in:
 * - email: lower-cased `local@domain`, from mailto: links (every address of a multi-address link,
 *   query dropped), JSON-LD `email`, and the visible text of the contact page;
 * - phone: an optional leading `+` followed by digits only, everything else (spaces, dots, dashes,
 *   parentheses, `tel:` parameters such as `;ext=`) dropped: `tel:+1 (555) 010-0199` is `+15550100199`.
 *   Between 3 and 15 digits (E.164's maximum); anything else is not kept;
 * - postal address: one line, `street, locality, region postalCode, country`, empty parts left out
 *   (`1 Main St, Springfield, IL 62701, US`); a plain-string address is kept as written, whitespace collapsed.
 */

/** Email addresses as they appear in text. Matching inside text, not parsing markup. */
const EMAIL_IN_TEXT = /[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,24}/gi;
const EMAIL = /^[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,24}$/i;
/** "Top-level domains" that are really file extensions (`logo@2x.png` is not an address). */
const FILE_ENDINGS = new Set(["png", "jpg", "jpeg", "gif", "svg", "webp", "avif", "css", "js"]);

/** The address in its record form, or undefined when it is not one. */
export function normaliseEmail(raw: string): string | undefined {
  const email = raw
    .trim()
    .replace(/^mailto:/i, "")
    .toLowerCase();
  if (!EMAIL.test(email)) return undefined;
  return FILE_ENDINGS.has(email.slice(email.lastIndexOf(".") + 1)) ? undefined : email;
}

/** The addresses of a `mailto:` href (`mailto:a@x.org,b@x.org?subject=Hi`). */
export function emailsOfMailto(href: string): string[] {
  const rest = href.trim().replace(/^mailto:/i, "");
  const to = rest.split("?")[0] ?? "";
  return to
    .split(",")
    .map((part) => normaliseEmail(safeDecode(part)))
    .filter((e): e is string => e !== undefined);
}

/**
 * The email addresses written in a text, in order of appearance. Only words holding an "@" (and short
 * enough to be an address) are searched: a long run of letters cannot make the pattern backtrack for long.
 */
export function emailsInText(text: string): string[] {
  return text
    .split(/\s+/)
    .filter((word) => word.includes("@") && word.length <= 320)
    .flatMap((word) => [...word.matchAll(EMAIL_IN_TEXT)].map((m) => normaliseEmail(m[0])))
    .filter((e): e is string => e !== undefined);
}

/** A phone number (a `tel:` href or a written number) in record form, or undefined when it is not one. */
export function normalisePhone(raw: string): string | undefined {
  const number = safeDecode(raw.trim().replace(/^tel:/i, "")).split(";")[0]!.trim();
  const digits = number.replace(/\D/g, "");
  if (digits.length < 3 || digits.length > 15) return undefined;
  return number.startsWith("+") ? `+${digits}` : digits;
}

/** The one-line form of a schema.org PostalAddress (an object) or a plain-string address. */
export function formatPostalAddress(value: unknown): string | undefined {
  if (typeof value === "string") return collapse(value) || undefined;
  if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const a = value as Record<string, unknown>;
  const country = a.addressCountry;
  const parts = [
    text(a.streetAddress),
    text(a.addressLocality),
    [text(a.addressRegion), text(a.postalCode)].filter(Boolean).join(" "),
    text(country && typeof country === "object" ? (country as Record<string, unknown>).name : country),
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(", ") : undefined;
}

function text(value: unknown): string {
  if (typeof value === "number") return String(value);
  return typeof value === "string" ? collapse(value) : "";
}

/** Whitespace runs folded to one space, ends trimmed. */
export function collapse(value: string): string {
  return value.replace(/\s+/g, " ").trim();
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
