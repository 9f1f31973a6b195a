/**
 * Reading schema.org JSON-LD (`<script type="application/ld+json">`) the way sites actually publish it:
 * a node, an array of nodes, or a `@graph`; `@type` as a string or an array, bare (`Organization`),
 * prefixed (`schema:Organization`) or as an IRI (`https://schema.org/Organization`); values as a
 * string, an array or a nested node. Nothing here fetches a `@context`.
 */
import { emailsOfMailto, formatPostalAddress, normaliseEmail, normalisePhone } from "./contact.js";

export type JsonLdNode = Record<string, unknown>;

/** Nodes read from one page at most: a page cannot make us hold an unbounded graph. */
const MAX_NODES = 200;

function isNode(value: unknown): value is JsonLdNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The top-level nodes of one JSON-LD script's parsed value: arrays and `@graph`s are opened. */
export function flattenJsonLd(value: unknown, into: JsonLdNode[] = []): JsonLdNode[] {
  if (into.length >= MAX_NODES) return into;
  if (Array.isArray(value)) {
    for (const item of value) flattenJsonLd(item, into);
  } else if (isNode(value)) {
    if (value["@type"] !== undefined || value["@graph"] === undefined) into.push(value);
    if (value["@graph"] !== undefined) flattenJsonLd(value["@graph"], into);
  }
  return into;
}

/** A node's types, as bare schema.org names (`Organization`, `FAQPage`). */
export function typesOf(node: JsonLdNode): string[] {
  const raw = node["@type"];
  const list = Array.isArray(raw) ? raw : [raw];
  return list
    .filter((t): t is string => typeof t === "string")
    .map((t) => t.slice(Math.max(t.lastIndexOf("/"), t.lastIndexOf(":")) + 1));
}

/** The strings of a property that is a string or an array of strings (nodes' `name`s count for `name`). */
export function stringsOf(value: unknown): string[] {
  const list = Array.isArray(value) ? value : [value];
  return list
    .map((v) => (typeof v === "string" ? v : isNode(v) && typeof v["@value"] === "string" ? v["@value"] : undefined))
    .filter((v): v is string => v !== undefined && v.trim() !== "")
    .map((v) => v.replace(/\s+/g, " ").trim());
}

/** The nodes of a property that holds a node or an array of nodes. */
function nodesOf(value: unknown): JsonLdNode[] {
  return (Array.isArray(value) ? value : [value]).filter(isNode);
}

/** A node and its contact points: where `email`, `telephone` and `address` live. */
function contactHolders(node: JsonLdNode): JsonLdNode[] {
  if (typesOf(node).includes("Person")) return [];
  return [node, ...nodesOf(node.contactPoint)];
}

export function emailsOf(node: JsonLdNode): string[] {
  return contactHolders(node).flatMap((n) =>
    stringsOf(n.email).flatMap((e) =>
      /^mailto:/i.test(e) ? emailsOfMailto(e) : [normaliseEmail(e)].filter((x) => x !== undefined),
    ),
  );
}

export function phonesOf(node: JsonLdNode): string[] {
  return contactHolders(node)
    .flatMap((n) => stringsOf(n.telephone))
    .map(normalisePhone)
    .filter((p): p is string => p !== undefined);
}

/** The one-line postal addresses of a node (its `address`, or the node itself when it is a PostalAddress). */
export function addressesOf(node: JsonLdNode): string[] {
  if (typesOf(node).includes("Person")) return [];
  const values = typesOf(node).includes("PostalAddress") ? [node] : Array.isArray(node.address) ? node.address : [node.address];
  return values.map(formatPostalAddress).filter((a): a is string => a !== undefined);
}

/** The question texts of an FAQPage node (`mainEntity` Questions, by `name`, else `text`). */
export function faqQuestionsOf(node: JsonLdNode): string[] {
  if (!typesOf(node).includes("FAQPage")) return [];
  return nodesOf(node.mainEntity).flatMap((q) => {
    const question = stringsOf(q.name)[0] ?? stringsOf(q.text)[0];
    return question ? [question] : [];
  });
}
