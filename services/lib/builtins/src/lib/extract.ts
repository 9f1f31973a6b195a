/**
 * Finds emails, URLs, hashtags and numbers in text with fixed scanners whose cost is linear in the text:
 * each scan is anchored on a marker ("@", "http", "#", a digit) and reads a bounded window, so no input can
 * make matching backtrack (no user-supplied patterns, no unanchored global regexes with open quantifiers).
 */

const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;
const MAX_URL = 2048;
const MAX_HASHTAG = 100;
const MAX_NUMBER = 64;

const isLocalChar = (c: string) => /[A-Za-z0-9._%+-]/.test(c);
const isDomainChar = (c: string) => /[A-Za-z0-9.-]/.test(c);
const DOMAIN = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

export function extractEmails(text: string): string[] {
  const found: string[] = [];
  let at = text.indexOf("@");
  while (at !== -1) {
    let start = at;
    while (start > 0 && at - start < MAX_LOCAL && isLocalChar(text[start - 1]!)) start--;
    let end = at + 1;
    while (end < text.length && end - at <= MAX_DOMAIN && isDomainChar(text[end]!)) end++;
    let local = text.slice(start, at);
    // A local part never starts with a dot; a sentence's full stop after the domain is not part of it.
    local = local.replace(/^\.+/, "");
    const domain = text.slice(at + 1, end).replace(/[.-]+$/, "");
    if (local !== "" && !local.endsWith(".") && !local.includes("..") && DOMAIN.test(domain)) found.push(`${local}@${domain}`);
    at = text.indexOf("@", at + 1);
  }
  return found;
}

/** Characters that end a URL in running text: whitespace, controls, and those RFC 3986 never allows unescaped. */
const isUrlStop = (c: string) =>
  c.charCodeAt(0) <= 0x20 || c.charCodeAt(0) === 0x7f || `<>"'\`{}|\\^`.includes(c) || /\s/.test(c);
const CLOSERS: Record<string, string> = { ")": "(", "]": "[" };

export function extractUrls(text: string): string[] {
  const found: string[] = [];
  const lower = text.toLowerCase();
  let from = 0;
  while (true) {
    const start = lower.indexOf("http", from);
    if (start === -1) break;
    const scheme = lower.startsWith("https://", start) ? 8 : lower.startsWith("http://", start) ? 7 : 0;
    const boundary = start === 0 || !/[A-Za-z0-9]/.test(text[start - 1]!);
    if (scheme === 0 || !boundary) {
      from = start + 4;
      continue;
    }
    let end = start + scheme;
    while (end < text.length && end - start < MAX_URL && !isUrlStop(text[end]!)) end++;
    const url = trimUrl(text.slice(start, end));
    if (url.length > scheme) found.push(url);
    from = end;
  }
  return found;
}

/** Drops trailing sentence punctuation and closing brackets that were not opened inside the URL. */
function trimUrl(url: string): string {
  const open: Record<string, number> = { "(": 0, "[": 0, ")": 0, "]": 0 };
  for (const c of url) if (c in open) open[c]!++;
  let end = url.length;
  while (end > 0) {
    const last = url[end - 1]!;
    const opener = CLOSERS[last];
    const unbalanced = opener !== undefined && open[opener]! < open[last]!;
    if (!".,;:!?*".includes(last) && !unbalanced) break;
    if (opener !== undefined) open[last]!--;
    end--;
  }
  return url.slice(0, end);
}

const isTagChar = (c: string) => /[\p{L}\p{N}_]/u.test(c);

export function extractHashtags(text: string): string[] {
  const found: string[] = [];
  let hash = text.indexOf("#");
  while (hash !== -1) {
    let end = hash + 1;
    const afterWord = hash > 0 && isTagChar(text[hash - 1]!);
    if (!afterWord) {
      while (end < text.length && end - hash <= MAX_HASHTAG && isTagChar(text[end]!)) end++;
      const tag = text.slice(hash + 1, end);
      if (/\p{L}/u.test(tag)) found.push(`#${tag}`);
    }
    hash = text.indexOf("#", Math.max(end, hash + 1));
  }
  return found;
}

// Sticky, so each attempt starts exactly at the scanner's position and costs at most the length of the run
// of digits it reads; the scanner then moves past that run, so the whole scan is linear.
const NUMBER = /[-+]?(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?/y;

export function extractNumbers(text: string): number[] {
  const found: number[] = [];
  let i = 0;
  while (i < text.length) {
    const startsNumber = /[\d.+-]/.test(text[i]!) && (i === 0 || !/[\p{L}\p{N}_.]/u.test(text[i - 1]!));
    NUMBER.lastIndex = i;
    const match = startsNumber ? NUMBER.exec(text) : null;
    if (match === null) {
      i++;
      continue;
    }
    const value = Number(match[0].replaceAll(",", ""));
    if (Number.isFinite(value) && match[0].length <= MAX_NUMBER) found.push(value);
    i += match[0].length;
  }
  return found;
}
