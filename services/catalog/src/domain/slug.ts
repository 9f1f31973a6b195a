/**
 * Slugs: lowercase ASCII words joined by hyphens, made once from a name and never changed by later
 * edits (only an explicit slug edit changes one), so links and saved ids keep working.
 */
import { invalidArgument } from "@toolport/kit/errors";

const MAX_LENGTH = 80;
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

export function slugify(text: string): string {
  const words = text
    // camelCase and PascalCase boundaries become word breaks: findPetsByStatus -> find pets by status
    .replace(/([a-z0-9])(?=[A-Z][a-z])/g, "$1 ")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  let slug = "";
  for (const word of words) {
    const next = slug ? `${slug}-${word}` : word;
    if (next.length > MAX_LENGTH) break;
    slug = next;
  }
  return slug || "item";
}

/** Validates a slug a publisher chose. */
export function checkSlug(slug: string, field: string): string {
  if (!SLUG.test(slug) || slug.length > MAX_LENGTH) {
    throw invalidArgument(
      "invalid_slug",
      `${field} must be lowercase letters, digits and single hyphens (at most ${MAX_LENGTH})`,
      {
        details: { field },
      },
    );
  }
  return slug;
}

/** Slugs look like this; ids are UUIDs. Lets a lookup skip the id column when the value is not one. */
export function isUuid(value: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value);
}

/**
 * What every `base-N` candidate of uniqueSlug starts with: `base-`, and, for a base too long to take a
 * suffix of d digits within the limit, its first characters and `-`. A lookup of the taken forms by the
 * `base-` prefix alone missed the shortened ones, and the publish broke the unique index (the whole
 * APIs.guru directory: long Azure titles published a second and a third time answered 500).
 * Covers N up to 9,999.
 */
export function slugSuffixPrefixes(base: string): string[] {
  const prefixes = new Set([`${base}-`]);
  for (let digits = 1; digits <= 4; digits++) prefixes.add(`${base.slice(0, MAX_LENGTH - digits - 1)}-`);
  return [...prefixes];
}

/** The first of base, base-2, base-3, ... that `taken` does not hold. */
export function uniqueSlug(base: string, taken: (slug: string) => boolean): string {
  if (!taken(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base.slice(0, MAX_LENGTH - String(n).length - 1)}-${n}`;
    if (!taken(candidate)) return candidate;
  }
}
