/**
 * The typed client (@toolport/client, generated from the description) against a running gateway: an
 * agent's whole first session, register -> publish -> search -> call -> read back -> batch, written only
 * with the client's typed paths, parameters and bodies. It compiles only while the description has these
 * routes with these fields, and every answer here is also checked against the description by the
 * harness's rules (test/harness/described.ts), so the client, the description and the gateway agree.
 */
import { randomBytes } from "node:crypto";
import { createToolportClient, type ToolportClient } from "@toolport/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkDescribed } from "../harness/described.js";
import { startEchoApi, type Upstream } from "../harness/upstreams.js";
import { type ExecStack, echoApiDocument, startExecStack } from "./execution-support.js";

describe("@toolport/client, the typed client generated from the description", () => {
  let s: ExecStack;
  let api: Upstream;
  let anonymous: ToolportClient;
  let baseUrl: string;

  /** The harness's check of one answer against the description, as gatewayClient does for every reply. */
  const described = async (method: string, path: string, response: Response, body: unknown) =>
    checkDescribed({
      baseUrl,
      method,
      path: path.replace(/^\/v1/, ""),
      status: response.status,
      contentType: response.headers.get("content-type"),
      body,
    });

  beforeAll(async () => {
    api = await startEchoApi();
    s = await startExecStack([`127.0.0.1:${api.port}`]);
    baseUrl = s.stack.gatewayUrl;
    anonymous = createToolportClient({ baseUrl });
  });
  afterAll(async () => {
    await s?.stop();
    await api?.close();
  });

  it("registers, publishes, searches, calls, reads back and batches, all typed", async () => {
    const name = `typed-${randomBytes(3).toString("hex")}`;
    const registered = await anonymous.POST("/v1/agents", { body: { name, operator_email: `${name}@example.com` } });
    await described("POST", "/v1/agents", registered.response, registered.data ?? registered.error);
    expect(registered.response.status).toBe(200);
    const apiKey = registered.data!.api_key;
    expect(registered.data!.getting_started.read_next.reference).toBe(`${s.stack.env.PUBLIC_URL}/docs`);

    const toolport = createToolportClient({ baseUrl, apiKey });
    const published = await toolport.POST("/v1/services", {
      body: { api: { document: echoApiDocument(), base_url: api.url } },
    });
    await described("POST", "/v1/services", published.response, published.data ?? published.error);
    expect(published.response.status).toBe(201);
    const listItems = published.data!.tools.find((t) => t.name === "list_items")!;
    expect(listItems).toBeDefined();

    const search = await toolport.GET("/v1/tools/search", { params: { query: { query: "list items" } } });
    await described("GET", "/v1/tools/search?query=list%20items", search.response, search.data ?? search.error);
    expect(search.data!.map((t) => t.id)).toContain(listItems.id);

    const before = api.requests.length;
    const called = await toolport.POST("/v1/tools/call/{tool_id}", {
      params: { path: { tool_id: listItems.id } },
      body: { tool_input: { n: 2 } },
    });
    await described("POST", `/v1/tools/call/${listItems.id}`, called.response, called.data ?? called.error);
    expect(called.response.status).toBe(200);
    expect(called.data!.success).toBe(true);
    expect(api.requests.length).toBe(before + 1);

    const stored = await toolport.GET("/v1/tools/executions/{execution_id}/result", {
      params: { path: { execution_id: called.data!.execution_id } },
    });
    const storedPath = `/v1/tools/executions/${called.data!.execution_id}/result`;
    await described("GET", storedPath, stored.response, stored.data ?? stored.error);
    expect(stored.data!.status).toBe("success");
    expect(stored.data!.result).toEqual(called.data!.result);

    const batch = await toolport.POST("/v1/tools/call/batch", {
      body: { calls: [{ tool_id: listItems.id, tool_input: { n: 1 } }, { tool_id: "no-such-tool" }] },
    });
    await described("POST", "/v1/tools/call/batch", batch.response, batch.data ?? batch.error);
    // Typed as the 200 or the 202 (Prefer: respond-async) body; without the header it is the 200's.
    expect(batch.response.status).toBe(200);
    expect(batch.data!.results!.map((r) => r.success)).toEqual([true, false]);
  });

  it("gives the typed error body for a refusal", async () => {
    const refused = await anonymous.GET("/v1/tools/search", { params: { query: { query: "x" } } });
    await described("GET", "/v1/tools/search?query=x", refused.response, refused.error);
    expect(refused.response.status).toBe(401);
    expect(refused.error!.error.code).toBe("unauthenticated");
    expect(refused.error!.detail).toBe(refused.error!.error.message);
  });
});
