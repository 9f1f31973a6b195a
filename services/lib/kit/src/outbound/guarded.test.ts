import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AddressPolicy } from "./address-policy.js";
import { Outbound, outboundFailureKind, ResponseTooLarge } from "./guarded.js";

/**
 * Outbound.send against a real HTTP server on loopback (allowed by the policy's list): the overall
 * deadline holds over a body that keeps arriving (each chunk well inside undici's own body timeout), the
 * size limit holds while reading, and a good answer is read whole.
 */
describe("Outbound.send", () => {
  let server: http.Server;
  let outbound: Outbound;
  let base: string;
  const dripping = new Set<NodeJS.Timeout>();

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/drip") {
        res.writeHead(200, { "content-type": "text/plain" });
        const timer = setInterval(() => res.write("x"), 20);
        dripping.add(timer);
        res.on("close", () => {
          clearInterval(timer);
          dripping.delete(timer);
        });
        return;
      }
      const body = req.url === "/big" ? "y".repeat(10_000) : JSON.stringify({ ok: true });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    base = `http://127.0.0.1:${port}`;
    outbound = new Outbound({ policy: new AddressPolicy(`127.0.0.1:${port}`) });
  });

  afterAll(async () => {
    await outbound.close();
    for (const timer of dripping) clearInterval(timer);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("ends a body that never ends at the overall deadline, as a timeout", async () => {
    const err = await outbound
      .send({ method: "GET", url: new URL(`${base}/drip`), headers: {} }, { timeoutMs: 300, maxBytes: 1 << 20 })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeDefined();
    expect(outboundFailureKind(err).kind).toBe("timeout");
  });

  it("refuses an answer over the size limit while reading it", async () => {
    await expect(
      outbound.send({ method: "GET", url: new URL(`${base}/big`), headers: {} }, { timeoutMs: 5_000, maxBytes: 1_000 }),
    ).rejects.toBeInstanceOf(ResponseTooLarge);
  });

  it("reads a good answer whole, many times over one keep-alive pool", async () => {
    for (let i = 0; i < 20; i++) {
      const res = await outbound.send(
        { method: "GET", url: new URL(`${base}/small`), headers: {} },
        { timeoutMs: 5_000, maxBytes: 1 << 20 },
      );
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body.toString("utf8"))).toEqual({ ok: true });
    }
  });
});
