/**
 * The behaviour every search engine must share, run against each engine by its own test file
 * (embedded.test.ts, meilisearch.test.ts). The catalog relies on exactly this: writes visible to the
 * next search, filters that narrow and never widen, a limit that holds, queries in other words than
 * the tool's that still find it, and nothing for a query that means nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SearchDocument, SearchEngine } from "./types.js";

export interface ContractTarget {
  /** A fresh, empty engine for one test. */
  create(): Promise<SearchEngine>;
  /** Frees what `create` made (a Meilisearch index). */
  dispose?(engine: SearchEngine): Promise<void>;
}

export function tool(id: string, fields: Partial<SearchDocument> & { name: string }): SearchDocument {
  return {
    id,
    slug: fields.name.toLowerCase().replace(/[^a-z0-9]+/g, "-"),
    description: "",
    serviceId: "svc-misc",
    serviceName: "Misc",
    serviceSlug: "misc",
    serviceDescription: "",
    tags: [],
    parameters: [],
    isDemo: false,
    active: true,
    visibility: "public",
    organizationId: null,
    ...fields,
  };
}

/** A small catalog with near misses for each query the suite asks. */
export const catalog: SearchDocument[] = [
  tool("sms-send", {
    name: "Send SMS",
    description: "Sends an SMS to a mobile phone number.",
    serviceId: "svc-twilio",
    serviceName: "Twilio",
    serviceSlug: "twilio",
    serviceDescription: "Programmable messaging and voice.",
    tags: ["messaging", "phone"],
    parameters: [
      { name: "to", description: "Recipient phone number in E.164 format" },
      { name: "body", description: "Content, up to 1600 characters" },
    ],
  }),
  tool("sms-status", {
    name: "Get SMS status",
    description: "Delivery status of an SMS sent earlier.",
    serviceId: "svc-twilio",
    serviceName: "Twilio",
    serviceSlug: "twilio",
    tags: ["messaging"],
  }),
  tool("email-send", {
    name: "Send email",
    description: "Sends an email to one or more recipients.",
    serviceId: "svc-mailer",
    serviceName: "Mailer",
    serviceSlug: "mailer",
    tags: ["email"],
  }),
  tool("tts", {
    name: "Text to speech",
    description: "Turns written text into spoken audio.",
    serviceId: "svc-voice",
    serviceName: "Voice Lab",
    serviceSlug: "voice-lab",
    tags: ["audio"],
  }),
  tool("weather-now", {
    name: "Current weather",
    description: "Current temperature, wind and conditions for a city.",
    serviceId: "svc-weather",
    serviceName: "Open Weather",
    serviceSlug: "open-weather",
    tags: ["weather"],
    parameters: [{ name: "city", description: "City name" }],
  }),
  tool("weather-forecast", {
    name: "Forecast",
    description: "Five-day forecast for a city.",
    serviceId: "svc-weather",
    serviceName: "Open Weather",
    serviceSlug: "open-weather",
    tags: ["weather"],
  }),
  tool("fx-latest", {
    name: "Latest",
    description: "Latest rates for a base.",
    serviceId: "svc-fx",
    serviceName: "Currency Exchange Rates",
    serviceSlug: "currency-exchange-rates",
    serviceDescription: "Foreign exchange rates for 170 currencies.",
    tags: ["finance"],
  }),
];

export function engineContract(label: string, target: ContractTarget, skipReason?: string): void {
  describe.skipIf(skipReason !== undefined)(
    skipReason === undefined ? `${label} search engine contract` : `${label} search engine contract (skipped: ${skipReason})`,
    () => {
      let engine: SearchEngine;
      const ids = async (query: string, options: Parameters<SearchEngine["search"]>[1] = { limit: 10 }) =>
        (await engine.search(query, options)).map((h) => h.id);

      beforeEach(async () => {
        engine = await target.create();
        await engine.replaceAll(catalog);
      });
      afterEach(async () => {
        await target.dispose?.(engine);
      });

      it("is healthy and says which engine it is", async () => {
        expect(await engine.healthy()).toBe(true);
        expect(engine.name).toBe(label);
      });

      it("finds a tool by the words of its name, best match first, with positive scores", async () => {
        const hits = await engine.search("current weather", { limit: 10 });
        expect(hits[0]?.id).toBe("weather-now");
        for (const hit of hits) expect(hit.score).toBeGreaterThan(0);
        for (let i = 1; i < hits.length; i++) expect(hits[i - 1]?.score).toBeGreaterThanOrEqual(hits[i]?.score as number);
      });

      it("finds a tool asked for in other words than its own: a text message is an SMS", async () => {
        expect((await ids("send a text message"))[0]).toBe("sms-send");
        expect((await ids("text message my friend that I am late")).slice(0, 2)).toContain("sms-send");
      });

      it("finds a tool with a generic name through its service", async () => {
        expect((await ids("currency exchange rates")).slice(0, 1)).toEqual(["fx-latest"]);
      });

      it("answers nothing for an empty query or one that means nothing", async () => {
        expect(await ids("")).toEqual([]);
        expect(await ids("   ")).toEqual([]);
        expect(await ids("qzxvbnmwrt plokijuhyg")).toEqual([]);
      });

      it("keeps to the limit", async () => {
        const all = await ids("send sms email weather forecast text", { limit: 10 });
        expect(all.length).toBeGreaterThan(2);
        expect(await ids("send sms email weather forecast text", { limit: 2 })).toEqual(all.slice(0, 2));
        expect(await ids("send sms email weather forecast text", { limit: 1 })).toEqual(all.slice(0, 1));
      });

      it("filters by service", async () => {
        const hits = await ids("send", { limit: 10, serviceId: "svc-mailer" });
        expect(hits).toEqual(["email-send"]);
        expect(await ids("weather", { limit: 10, serviceId: "svc-twilio" })).toEqual([]);
      });

      it("filters by tags, all of them required", async () => {
        expect(await ids("sms", { limit: 10, tags: ["messaging", "phone"] })).toEqual(["sms-send"]);
        expect((await ids("sms", { limit: 10, tags: ["messaging"] })).sort()).toEqual(["sms-send", "sms-status"]);
        expect(await ids("sms", { limit: 10, tags: ["weather"] })).toEqual([]);
      });

      it("filters by candidate ids; an empty candidate list matches nothing", async () => {
        expect(await ids("weather forecast", { limit: 10, candidateIds: ["weather-forecast", "sms-send"] })).toEqual([
          "weather-forecast",
        ]);
        expect(await ids("weather", { limit: 10, candidateIds: [] })).toEqual([]);
      });

      it("filters by who sees: public for anyone, internal and its own organization's for a member, all for an admin", async () => {
        await engine.upsert([
          tool("w-internal", { name: "Weather internal", visibility: "internal" }),
          tool("w-org-a", { name: "Weather of A", visibility: "private", organizationId: "org-a" }),
          tool("w-org-b", { name: "Weather of B", visibility: "local_only", organizationId: "org-b" }),
        ]);
        const seen = async (who: { organizationId: string | null; all?: boolean }) =>
          (await ids("weather", { limit: 20, visibleTo: who })).filter((id) => id.startsWith("w-")).sort();
        expect(await seen({ organizationId: null })).toEqual([]);
        expect(await seen({ organizationId: "org-a" })).toEqual(["w-internal", "w-org-a"]);
        expect(await seen({ organizationId: "org-c", all: true })).toEqual(["w-internal", "w-org-a", "w-org-b"]);
        expect(await ids("weather forecast", { limit: 20, visibleTo: { organizationId: null } })).toContain("weather-forecast");
      });

      it("shows an upsert to the very next search, replacing the document with the same id", async () => {
        await engine.upsert([tool("geo-ip", { name: "IP geolocation", description: "Country and city of an IP address." })]);
        expect((await ids("ip geolocation"))[0]).toBe("geo-ip");

        await engine.upsert([tool("geo-ip", { name: "Domain age", description: "When a domain name was registered." })]);
        expect(await ids("geolocation")).not.toContain("geo-ip");
        expect((await ids("domain age"))[0]).toBe("geo-ip");
      });

      it("shows a removal to the very next search and ignores unknown ids", async () => {
        await engine.remove(["weather-now", "no-such-tool"]);
        const hits = await ids("current weather");
        expect(hits).not.toContain("weather-now");
        expect(hits).toContain("weather-forecast");
      });

      it("replaces everything with replaceAll", async () => {
        await engine.replaceAll([tool("pdf-merge", { name: "Merge PDF files", description: "Joins PDF documents into one." })]);
        expect(await ids("merge pdf")).toEqual(["pdf-merge"]);
        expect(await ids("weather")).toEqual([]);
        await engine.replaceAll([]);
        expect(await ids("merge pdf")).toEqual([]);
      });

      it("replaces from batches as they are read, answering from the previous content until the last is in", async () => {
        let readLast: () => void = () => {};
        const lastReadable = new Promise<void>((resolve) => {
          readLast = resolve;
        });
        let firstTaken: () => void = () => {};
        const firstBatchTaken = new Promise<void>((resolve) => {
          firstTaken = resolve;
        });
        async function* batches() {
          yield [tool("pdf-merge", { name: "Merge PDF files", description: "Joins PDF documents into one." })];
          firstTaken();
          await lastReadable;
          yield [tool("pdf-split", { name: "Split PDF files", description: "Cuts a PDF document into pages." })];
        }
        const replacing = engine.replaceAll(batches());
        await firstBatchTaken;
        expect(await ids("current weather")).toContain("weather-now");
        expect(await ids("merge pdf")).toEqual([]);
        readLast();
        await replacing;
        expect(await ids("weather")).toEqual([]);
        expect((await ids("pdf")).sort()).toEqual(["pdf-merge", "pdf-split"]);
      });

      it("moves a tool to another service when its document says so", async () => {
        await engine.upsert([{ ...(catalog[4] as SearchDocument), serviceId: "svc-other", serviceName: "Other" }]);
        expect(await ids("current weather", { limit: 10, serviceId: "svc-weather" })).not.toContain("weather-now");
        expect(await ids("current weather", { limit: 10, serviceId: "svc-other" })).toEqual(["weather-now"]);
      });
    },
  );
}
