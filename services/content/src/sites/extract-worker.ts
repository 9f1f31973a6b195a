/**
 * The body of a page-extraction thread (extract-pool.ts): reads one HTML page with extract.ts, off the
 * content role's event loop. URLs cross the thread boundary as strings (structured cloning drops a
 * URL's class); `toPageFacts` turns them back on the other side.
 */
import { threadId } from "node:worker_threads";
import { extractPage, type PageFacts } from "./extract.js";

export interface ExtractTask {
  body: Uint8Array;
  url: string;
  charset?: string;
}

/** PageFacts with every URL as its href. */
export type PageFactsWire = Omit<PageFacts, "links" | "serviceDescLinks"> & {
  links: { url: string; text: string }[];
  serviceDescLinks: string[];
  /** The thread that read it. */
  threadId?: number;
};

export function toWire(facts: PageFacts): PageFactsWire {
  return {
    ...facts,
    links: facts.links.map((l) => ({ url: l.url.href, text: l.text })),
    serviceDescLinks: facts.serviceDescLinks.map((u) => u.href),
  };
}

export function toPageFacts({ threadId: _, ...wire }: PageFactsWire): PageFacts {
  return {
    ...wire,
    links: wire.links.map((l) => ({ url: new URL(l.url), text: l.text })),
    serviceDescLinks: wire.serviceDescLinks.map((u) => new URL(u)),
  };
}

export default function run(task: ExtractTask): PageFactsWire {
  const body = Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength);
  return { ...toWire(extractPage(body, new URL(task.url), task.charset)), threadId };
}
