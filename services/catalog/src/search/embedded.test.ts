import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import v8 from "node:v8";
import { createLogger } from "@toolport/kit/logger";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddedEngine } from "./embedded.js";
import { createEmbedder } from "./embedding.js";
import { catalog, engineContract, tool } from "./engine.contract.js";
import { createSearchEngine } from "./index.js";
import { PairTable } from "./postings.js";
import { relatedTerms } from "./synonyms.js";
import { queryTerms, terms, withoutValues, words } from "./text.js";
import type { SearchDocument } from "./types.js";

const log = createLogger("search-test", "silent");

engineContract("embedded", { create: async () => new EmbeddedEngine(log) });

describe("text analysis", () => {
  it("splits identifiers, paths and punctuation into words", () => {
    expect(words("getUserById")).toEqual(["get", "user", "by", "id"]);
    expect(words("/v1/sms-send?to=x")).toEqual(["v1", "sms", "send", "to", "x"]);
    expect(words("HTTPServer JSONToXML")).toEqual(["http", "server", "json", "to", "xml"]);
    expect(words("Café résumé")).toEqual(["cafe", "resume"]);
  });

  it("stems words so forms of one word meet, and keeps acronyms and news whole", () => {
    expect(terms("tracking")).toEqual(terms("tracks"));
    expect(terms("messages")).toEqual(terms("messaging"));
    expect(terms("sms news")).toEqual(["sms", "news"]);
  });

  it("gives every word a string term, including names of Object.prototype's members", () => {
    // "constructor" once became Object.prototype.constructor, a function, as its term.
    expect(terms("constructor tostring hasownproperty")).toEqual(["constructor", "tostr", "hasownproperti"]);
    for (const term of terms("constructor __proto__ valueOf")) expect(typeof term).toBe("string");
  });

  it("drops stop words everywhere and request phrasing from queries only", () => {
    expect(terms("get the details of a user")).toEqual(["get", "detail", "user"]);
    expect(queryTerms("Could you please provide me the weather in Paris? Thanks!")).toEqual(["weather", "pari"]);
    expect(terms("Please provide")).toEqual(["pleas", "provid"]);
  });

  it("relates phrases and words of one synonym group, not the ones already asked", () => {
    const related = relatedTerms(queryTerms("send a text message"));
    expect(related.get("sms")).toBe(1);
    expect(related.has("text")).toBe(false);
    expect(relatedTerms(queryTerms("mail")).has("email")).toBe(true);
    expect(relatedTerms(queryTerms("quarterly revenue")).size).toBe(0);
  });
});

describe("pair table", () => {
  it("keeps every pair through its growth and tells ordered pairs apart", () => {
    const table = new PairTable();
    for (let a = 0; a < 300; a++) for (let b = 0; b < 30; b++) table.set(a, b, a * 1000 + b);
    expect(table.size).toBe(9000);
    expect(table.get(299, 29)).toBe(299_029);
    expect(table.get(29, 299)).toBeUndefined();
    table.set(5, 6, 1);
    expect(table.get(5, 6)).toBe(1);
    expect(table.size).toBe(9000);
  });
});

describe("embedded engine snapshot", () => {
  const queries = ["send a text message", "weather forecast for a city", "exchange rates", "email", "audio speech"];
  const answers = async (engine: EmbeddedEngine) =>
    Promise.all(queries.map((q) => engine.search(q, { limit: 10, tags: q === "email" ? ["email"] : undefined })));

  it("restores, through v8.serialize, an index that answers and changes exactly as the original", async () => {
    const original = new EmbeddedEngine(log);
    await original.replaceAll(catalog);
    // Changes since the build (a log of added postings, a dead tool, a renamed service) travel too.
    await original.upsert([
      tool("sms-bulk", { name: "Send bulk SMS", serviceId: "svc-twilio", serviceName: "Twilio Messaging" }),
    ]);
    await original.remove(["tts"]);
    const restored = new EmbeddedEngine(log);
    restored.restore(v8.deserialize(v8.serialize(original.snapshot())));
    expect(await answers(restored)).toEqual(await answers(original));
    expect((await restored.search("speech", { limit: 5 })).map((h) => h.id)).toEqual([]);
    expect(restored.stats()).toEqual(original.stats());

    // Both go on from there alike: a new tool with new words, a removal, an edit.
    for (const engine of [original, restored]) {
      await engine.upsert([
        tool("geo", { name: "Geocode address", description: "Latitude and longitude of a street address.", serviceName: "Maps" }),
        tool("weather-now", { name: "Current weather conditions", serviceId: "svc-weather", serviceName: "Open Weather" }),
      ]);
      await engine.remove(["fx-latest"]);
    }
    expect((await restored.search("geocode street address", { limit: 3 }))[0]?.id).toBe("geo");
    expect(await restored.search("latitude longitude", { limit: 10 })).toEqual(
      await original.search("latitude longitude", { limit: 10 }),
    );
    expect(await answers(restored)).toEqual(await answers(original));
  });

  it("caught up with changes and settled, ranks exactly as a rebuild of the same tools", async () => {
    const original = new EmbeddedEngine(log);
    await original.replaceAll(catalog);
    const restored = new EmbeddedEngine(log);
    restored.restore(v8.deserialize(v8.serialize(original.snapshot())));
    // What a start's catch-up does: re-index the changed tools, drop the deleted ones.
    const removed = new Set(["tts", "fx-latest", "sms-status"]);
    const changed = [
      tool("sms-send", {
        name: "Send SMS and MMS messages",
        description: "Sends a text or picture message to any mobile phone number worldwide, with delivery receipts.",
        serviceId: "svc-twilio",
        serviceName: "Twilio",
      }),
      tool("geo", { name: "Geocode address", description: "Latitude and longitude of a street address.", serviceName: "Maps" }),
    ];
    await restored.upsert(changed);
    await restored.remove([...removed]);
    restored.settle();
    const rebuilt = new EmbeddedEngine(log);
    const ids = new Set(changed.map((d) => d.id));
    await rebuilt.replaceAll([...catalog.filter((d) => !removed.has(d.id) && !ids.has(d.id)), ...changed]);
    const byId = (hits: { id: string; score: number }[]) => [...hits].sort((a, b) => a.id.localeCompare(b.id));
    for (const q of [...queries, "send a message to a phone", "street address", "rates"]) {
      for (const visibleTo of [undefined, { organizationId: null }]) {
        expect(byId(await restored.search(q, { limit: 20, visibleTo })), q).toEqual(
          byId(await rebuilt.search(q, { limit: 20, visibleTo })),
        );
      }
    }
  });

  it("names its code and settings in its key, so a snapshot made otherwise is not read", () => {
    const key = new EmbeddedEngine(log).snapshotKey();
    expect(new EmbeddedEngine(log).snapshotKey()).toBe(key);
    expect(new EmbeddedEngine(log, { params: { k1: 1.5 } }).snapshotKey()).not.toBe(key);
    const embedder = { identity: "http://127.0.0.1:1/v1 model-a", embed: async () => [] };
    expect(new EmbeddedEngine(log, { embedder }).snapshotKey()).not.toBe(key);
    expect(
      new EmbeddedEngine(log, { embedder: { ...embedder, identity: "http://127.0.0.1:1/v1 model-b" } }).snapshotKey(),
    ).not.toBe(new EmbeddedEngine(log, { embedder }).snapshotKey());
  });
});

describe("embedded engine ranking", () => {
  it("ranks the tools of the service a long multi-part request is about above scattered word matches", async () => {
    const engine = new EmbeddedEngine(log);
    await engine.replaceAll([
      ...catalog,
      tool("tracking-track", {
        name: "Track package",
        description: "Tracking events of a parcel.",
        serviceId: "svc-parcels",
        serviceName: "Parcel Tracker",
      }),
      tool("tracking-carrier", {
        name: "Detect carrier",
        description: "Which carrier a tracking number belongs to.",
        serviceId: "svc-parcels",
        serviceName: "Parcel Tracker",
      }),
      tool("numbers", { name: "Number facts", description: "Trivia about any number.", serviceName: "Numbers" }),
    ]);
    const hits = await engine.search(
      "I'm sending a parcel abroad and want to follow it. Could you track the package with tracking number YT2003? Also, which carrier is it with? Thanks!",
      { limit: 3 },
    );
    expect(
      hits
        .slice(0, 2)
        .map((h) => h.id)
        .sort(),
    ).toEqual(["tracking-carrier", "tracking-track"]);
  });

  it("within one service, returns the tools their own text matches, and every tool only when none does", async () => {
    const engine = new EmbeddedEngine(log);
    const files = { serviceId: "svc-files", serviceName: "Drive", serviceDescription: "Store and share files." };
    await engine.replaceAll([
      tool("link", { name: "Add shared link", description: "Shares a file by link.", ...files }),
      tool("token", { name: "Request token", description: "Exchanges a code for an access token.", ...files }),
      tool("authorize", { name: "Authorize", description: "Starts the sign-in.", ...files }),
      tool("other", {
        name: "Share a post",
        description: "Shares a post in the store.",
        serviceId: "svc-posts",
        serviceName: "Posts",
      }),
    ]);
    // Across the catalog the service's other tools join behind the matches; within it, they do not.
    const everywhere = (await engine.search("share a file", { limit: 10 })).map((h) => h.id);
    expect(everywhere.slice(0, 1)).toEqual(["link"]);
    expect(everywhere).toEqual(expect.arrayContaining(["token", "authorize"]));
    expect((await engine.search("share a file", { limit: 10, serviceId: "svc-files" })).map((h) => h.id)).toEqual(["link"]);
    // A query only the service's own text answers still lists its tools.
    const byService = await engine.search("store", { limit: 10, serviceId: "svc-files" });
    expect(byService.map((h) => h.id).sort()).toEqual(["authorize", "link", "token"]);
  });

  it("joins a matching service's other tools whatever their slots, past the scratch arrays' first size", async () => {
    // The matching tool is indexed first and its sibling after 1,100 others: the sibling's slot lies past the
    // score arrays' first 1,024 entries, which only grow as far as scored slots reach.
    const weather = { serviceId: "svc-acme", serviceName: "Acme", serviceDescription: "Quokka forecasts." };
    const fillers = Array.from({ length: 1100 }, (_, i) =>
      tool(`filler-${i}`, { name: `Record ${i}`, description: "Reads a record.", serviceId: `svc-${i % 50}` }),
    );
    const docs = [
      tool("forecast", { name: "Quokka forecast", description: "Forecast for a city.", ...weather }),
      ...fillers,
      tool("alerts", { name: "List alerts", description: "Lists alerts.", ...weather }),
    ];
    const engine = new EmbeddedEngine(log);
    await engine.replaceAll(docs);
    expect((await engine.search("quokka forecast", { limit: 10 })).map((h) => h.id)).toEqual(["forecast", "alerts"]);
    // The same after the sibling moves to a new slot (an upsert), further out still.
    await engine.upsert([docs.at(-1) as SearchDocument]);
    expect((await engine.search("quokka forecast", { limit: 10 })).map((h) => h.id)).toEqual(["forecast", "alerts"]);
  });

  it("keeps answering after many updates with consistent statistics", async () => {
    const engine = new EmbeddedEngine(log);
    await engine.replaceAll(catalog);
    for (let round = 0; round < 50; round++) {
      await engine.upsert([
        tool(`t${round % 5}`, { name: `Temporary ${round}`, description: "scratch tool", serviceId: `s${round % 3}` }),
      ]);
      if (round % 7 === 0) await engine.remove([`t${round % 5}`]);
    }
    await engine.remove(["t0", "t1", "t2", "t3", "t4"]);
    expect(await engine.search("scratch", { limit: 10 })).toEqual([]);
    expect((await engine.search("send a text message", { limit: 1 }))[0]?.id).toBe("sms-send");
  });

  it("reads an email address, web address or host name in a request as the kind of value it is, not as words", async () => {
    expect(withoutValues("Is 'jenny.smith@gmail.com' real? Compare apple.com with https://www.example.org/a?b=1.")).toBe(
      "Is ' email ' real? Compare  domain  with  url .",
    );
    const engine = new EmbeddedEngine(log);
    await engine.replaceAll([
      tool("gmail-alias", {
        name: "Validate alias",
        description: "Whether a send-as alias of a gmail.com account is valid.",
        serviceId: "svc-gmail",
        serviceName: "Gmail",
      }),
      tool("checkup-valid", {
        name: "Validate",
        description: "Whether an email address is valid.",
        serviceId: "svc-checkup",
        serviceName: "Email Checkup",
      }),
    ]);
    const hits = await engine.search("I need to make sure the email 'jenny.smith@gmail.com' is valid.", { limit: 2 });
    expect(hits.map((h) => h.id)).toEqual(["checkup-valid", "gmail-alias"]);
  });

  it("prefers a tool that says the query's phrase over one that holds its words apart", async () => {
    const engine = new EmbeddedEngine(log);
    await engine.replaceAll([
      tool("apart", { name: "Times", description: "Opening times of the city's prayer rooms and halls." }),
      tool("phrase", { name: "Schedule", description: "Prayer times of a city for one day." }),
    ]);
    expect((await engine.search("prayer times for a city", { limit: 2 }))[0]?.id).toBe("phrase");
  });

  it("answers as a fresh index would after many upserts and removals (dead postings merged away)", async () => {
    const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"];
    const make = (i: number, round: number) =>
      tool(`t${i}`, {
        name: `${words[(i + round) % 10]} ${words[(i * 3) % 10]}`,
        description: `${words[(i * 7 + round) % 10]} report number ${i}`,
        serviceId: `s${i % 7}`,
        serviceName: `Service ${words[i % 7]}`,
      });
    const engine = new EmbeddedEngine(log);
    let current = new Map<string, SearchDocument>();
    const initial = Array.from({ length: 300 }, (_, i) => make(i, 0));
    await engine.replaceAll(initial);
    for (const d of initial) current.set(d.id, d);
    // Enough changes to pass the merge thresholds of postings.ts several times.
    for (let round = 1; round <= 40; round++) {
      const batch = Array.from({ length: 150 }, (_, k) => make((k * 7 + round) % 300, round));
      await engine.upsert(batch);
      for (const d of batch) current.set(d.id, d);
      const gone = [`t${round % 300}`, `t${(round * 11) % 300}`];
      await engine.remove(gone);
      for (const id of gone) current.delete(id);
      await engine.search("alpha", { limit: 1 });
    }
    current = new Map([...current].sort());
    const fresh = new EmbeddedEngine(log);
    await fresh.replaceAll([...current.values()]);
    for (const query of ["alpha bravo", "charlie report", "service delta", "golf hotel india"]) {
      // Every match (the limit covers them all), each with the score a fresh index gives it (the
      // field-length averages may lag by up to 1%, see postings.ts).
      const got = new Map((await engine.search(query, { limit: 400 })).map((h) => [h.id, h.score]));
      const want = new Map((await fresh.search(query, { limit: 400 })).map((h) => [h.id, h.score]));
      expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
      for (const [id, score] of want) expect(got.get(id)).toBeCloseTo(score, 1);
    }
  });

  it("follows a service renamed by its tools' newer documents", async () => {
    const engine = new EmbeddedEngine(log);
    await engine.replaceAll(catalog);
    await engine.upsert([{ ...(catalog[0] as SearchDocument), serviceName: "Messagebird" }]);
    const hits = (await engine.search("messagebird", { limit: 5 })).map((h) => h.id);
    expect(hits.sort()).toEqual(["sms-send", "sms-status"]);
    await engine.remove(["sms-send", "sms-status"]);
    expect(await engine.search("messagebird", { limit: 5 })).toEqual([]);
  });

  it("is the engine createSearchEngine makes without MEILI_URL", async () => {
    const engine = await createSearchEngine({}, log);
    expect(engine.name).toBe("embedded");
  });
});

/**
 * A real OpenAI-compatible embeddings server with deterministic vectors: each dimension is one concept
 * and a text's vector counts the concept words it contains, so "handset" and "SMS" land together
 * though they share no word.
 */
const concepts = [
  ["sms", "handset", "texting", "mobile", "phone"],
  ["weather", "rain", "umbrella", "sunny", "forecast"],
  ["email", "inbox", "mail"],
  ["currency", "exchange", "money"],
];
function conceptVector(text: string): number[] {
  const lower = text.toLowerCase();
  return [...concepts.map((words) => words.filter((w) => lower.includes(w)).length), 0.01];
}

describe("embedding signal (hybrid) against a real embeddings server", () => {
  let server: Server;
  let url: string;
  let failing = false;
  const requests: { authorization?: string; model: string; inputs: number }[] = [];

  beforeAll(async () => {
    server = createServer(async (req: IncomingMessage, res) => {
      let raw = "";
      for await (const chunk of req) raw += chunk;
      const body = JSON.parse(raw) as { model: string; input: string[] };
      requests.push({ authorization: req.headers.authorization, model: body.model, inputs: body.input.length });
      if (failing || req.url !== "/v1/embeddings") {
        res.writeHead(failing ? 500 : 404).end();
        return;
      }
      // Answer out of order: the client must place each vector by its index.
      const data = body.input.map((text, index) => ({ object: "embedding", index, embedding: conceptVector(text) })).reverse();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("sends the model and key, batches, and returns unit vectors in input order", async () => {
    const embedder = createEmbedder({ url, model: "test-model", key: "sk-test", batchSize: 2 });
    const vectors = await embedder.embed(["sms", "rain", "mail box"]);
    expect(vectors).toHaveLength(3);
    expect(Math.round((vectors[1] as Float32Array)[1] as number)).toBe(1);
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(requests.slice(-2)).toEqual([
      { authorization: "Bearer sk-test", model: "test-model", inputs: 2 },
      { authorization: "Bearer sk-test", model: "test-model", inputs: 1 },
    ]);
  });

  it("finds a tool that shares no word with the query once the embedder is configured", async () => {
    const lexical = new EmbeddedEngine(log);
    await lexical.replaceAll(catalog);
    expect(await lexical.search("ping my handset", { limit: 3 })).toEqual([]);

    const hybrid = await createSearchEngine({ embeddingUrl: url, embeddingModel: "test-model" }, log);
    await hybrid.replaceAll(catalog);
    const hits = (await hybrid.search("ping my handset", { limit: 3 })).map((h) => h.id);
    expect(hits.slice(0, 2).sort()).toEqual(["sms-send", "sms-status"]);
    // The lexical match still leads where there is one.
    expect((await hybrid.search("current weather", { limit: 3 }))[0]?.id).toBe("weather-now");
  });

  it("falls back to lexical ranking when the embeddings server fails", async () => {
    const hybrid = new EmbeddedEngine(log, { embedder: createEmbedder({ url }) });
    failing = true;
    try {
      await hybrid.replaceAll(catalog);
      expect((await hybrid.search("current weather", { limit: 3 }))[0]?.id).toBe("weather-now");
      expect(await hybrid.search("ping my handset", { limit: 3 })).toEqual([]);
    } finally {
      failing = false;
    }
  });

  it("rejects an answer without one embedding per input", async () => {
    await expect(createEmbedder({ url: `${url}/nope` }).embed(["x"])).rejects.toThrow(/404/);
  });
});
