import { describe, expect, it } from "vitest";
import { apiRoot, buildGuide } from "./guide.js";
import { buildMcpJson, KEY_PLACEHOLDER } from "./mcp-json.js";

const starter = (n: number) => ({
  toolId: `tool-${n}`,
  name: `Tool ${n}`,
  service: "Demo",
  description: "d",
  parameters: { type: "object" },
  exampleInput: { q: n },
});

describe("the registration guide", () => {
  it("has at most three ready-to-send try_first examples carrying the key, and four steps", () => {
    const guide = buildGuide(
      { baseUrl: "https://api.example/v1", mcpUrl: "https://mcp.example/mcp" },
      5000,
      [1, 2, 3, 4].map(starter),
      "tp_k",
    );
    expect(guide.tryFirst).toHaveLength(3);
    expect(guide.tryFirst[0]!.execute).toEqual({
      method: "POST",
      url: "https://api.example/v1/tools/call/tool-1",
      headers: { "svc-api-key": "tp_k", "content-type": "application/json" },
      body: { tool_input: { q: 1 } },
    });
    expect(guide.steps).toHaveLength(4);
    expect(guide.endpoints.authHeader).toBe("svc-api-key: tp_k");
    expect(guide.freeTier.note).toContain("5,000");
  });

  it("normalises the API root", () => {
    expect(apiRoot("http://h:8080")).toBe("http://h:8080/v1");
    expect(apiRoot("http://h:8080/v1/")).toBe("http://h:8080/v1");
  });
});

describe("the client helper file", () => {
  it("adds svc-org-id only when an organization resolved, and an equivalent add-server command", () => {
    const org = { id: "o1", name: "Acme", slug: "acme", isPersonal: false, createdAt: new Date(), role: "admin" as const };
    expect(KEY_PLACEHOLDER).toBe(["$", "{DANUBE_API_KEY}"].join(""));
    const withOrg = buildMcpJson("https://mcp.example/mcp", org);
    expect(withOrg.mcpJson.mcpServers.danube.headers).toEqual({ "svc-api-key": KEY_PLACEHOLDER, "svc-org-id": "o1" });
    expect(withOrg.instructions).toContain(
      `claude mcp add --transport http --scope project danube https://mcp.example/mcp --header 'svc-api-key: ${KEY_PLACEHOLDER}' --header 'svc-org-id: o1'`,
    );
    const without = buildMcpJson("https://mcp.example/mcp", null);
    expect(without.mcpJson.mcpServers.danube).toEqual({
      type: "http",
      url: "https://mcp.example/mcp",
      headers: { "svc-api-key": KEY_PLACEHOLDER },
    });
    expect(without.org).toBeNull();
  });
});
