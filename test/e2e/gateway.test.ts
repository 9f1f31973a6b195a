/**
 * The gateway against the real six services: every failure leaves in the dual error body with the
 * right status, /v1/health reports each service, and the request id reaches the service's logs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Stack, serviceNames, startStack } from "../harness/stack.js";

interface Body {
  status?: string;
  services: Record<string, string>;
  roles: Record<string, { status: string; runs: string; pid?: number }>;
  detail: string;
  error: { code: string; message: string; details: Record<string, unknown> };
}
const json = async (res: Response): Promise<Body> => (await res.json()) as Body;

function expectErrorShape(body: unknown, code: string) {
  expect(body).toMatchObject({
    detail: expect.any(String),
    error: { code, message: expect.any(String), details: expect.any(Object) },
  });
  const b = body as { detail: string; error: { message: string } };
  expect(b.detail).toBe(b.error.message);
}

describe("gateway", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack([...serviceNames, "gateway"], { BODY_LIMIT_BYTES: "65536" }, { layout: "per-role" });
  });
  afterAll(() => stack?.stopAll());

  const url = (p: string) => `${stack.gatewayUrl}/v1${p}`;

  it("refuses malformed JSON with 400 in the error shape", async () => {
    const res = await fetch(url("/agents"), {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"name": "x",',
    });
    expect(res.status).toBe(400);
    expectErrorShape(await json(res), "invalid_json");
  });

  it("refuses a body over the limit with 413 in the error shape", async () => {
    const big = JSON.stringify({ name: "x".repeat(70_000) });
    const res = await fetch(url("/agents"), { method: "POST", headers: { "content-type": "application/json" }, body: big });
    expect(res.status).toBe(413);
    const body = await json(res);
    expectErrorShape(body, "payload_too_large");
    expect(body.error.details).toEqual({ limit_bytes: 65536 });
  });

  it("answers an unknown route with 404 in the error shape", async () => {
    const res = await fetch(url("/no/such/route"));
    expect(res.status).toBe(404);
    const body = await json(res);
    expectErrorShape(body, "not_found");
    expect(body.error.message).toContain("/v1/no/such/route");
  });

  it("answers a body no route takes with the router's 404 or 405, not the body's refusal", async () => {
    const sent = [
      { headers: { "content-type": "application/json" }, body: '{"name": "x",' },
      { headers: { "content-type": "text/plain" }, body: "not json" },
      { headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "x".repeat(70_000) }) },
    ];
    for (const { headers, body } of sent) {
      const unknown = await fetch(url("/no/such/route"), { method: "POST", headers, body });
      expect(unknown.status).toBe(404);
      expectErrorShape(await json(unknown), "not_found");
      const wrongMethod = await fetch(url("/health"), { method: "POST", headers, body });
      expect(wrongMethod.status).toBe(405);
      expectErrorShape(await json(wrongMethod), "method_not_allowed");
    }
    // The same bodies where a route takes them are refused as before.
    const malformed = await fetch(url("/agents"), { method: "POST", ...sent[0] });
    expect(malformed.status).toBe(400);
    expectErrorShape(await json(malformed), "invalid_json");
    const notJson = await fetch(url("/agents"), { method: "POST", ...sent[1] });
    expect(notJson.status).toBe(415);
    expectErrorShape(await json(notJson), "unsupported_media_type");
  });

  it("answers a path outside /v1 with 404 in the error shape", async () => {
    const res = await fetch(`${stack.gatewayUrl}/tools`);
    expect(res.status).toBe(404);
    expectErrorShape(await json(res), "not_found");
  });

  it("maps a service's error to its status in the error shape, carrying the request id to the service", async () => {
    const missing = "6f1c2b9e-8d4a-4f3e-9c1b-2a7d5e8f0b13";
    const res = await fetch(url(`/workflows/${missing}`), { headers: { "x-request-id": "req-e2e-404" } });
    expect(res.status).toBe(404);
    expect(res.headers.get("x-request-id")).toBe("req-e2e-404");
    expectErrorShape(await json(res), "workflow_not_found");
    // The id the caller sent is in the content service's own log line for that call.
    await expect.poll(() => stack.log("content"), { timeout: 5000 }).toContain('"request_id":"req-e2e-404"');
  });

  it("reports every service's health, then 503 naming the one that is down", async () => {
    const ok = await fetch(url("/health"));
    expect(ok.status).toBe(200);
    const body = await json(ok);
    expect(body.status).toBe("ok");
    expect(Object.keys(body.services).sort()).toEqual([...serviceNames].sort());
    // A process per role: each service is reached at its own address, the gateway runs in its own process.
    expect(body.roles.gateway).toEqual({ status: "serving", runs: "in_process", pid: expect.any(Number) });
    for (const name of serviceNames) {
      expect(body.roles[name], name).toEqual({ status: "serving", runs: `127.0.0.1:${stack.ports[name]}` });
    }

    await stack.stop("content");
    const down = await fetch(url("/health"));
    // The process itself still serves: /livez (Kubernetes' probe) checks nothing else.
    const live = await fetch(`${stack.gatewayUrl}/livez`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "ok" });
    expect(down.status).toBe(503);
    expect(down.headers.get("retry-after")).toBe("1");
    const downBody = await json(down);
    expect(downBody.services.content).toBe("unreachable");
    expect(downBody.error.details.down).toEqual(["content"]);
    expect(downBody.detail).toContain("content");

    await stack.start("content");
    expect((await fetch(url("/health"))).status).toBe(200);
  });
});
