/**
 * The HTTPS receiver harness (test/harness/https-receiver.ts): a separate Node process trusts it through
 * NODE_EXTRA_CA_CERTS and only then, the receiver records what it got and answers as told (status, delay,
 * hang-up), and waitFor/close behave.
 */
import { spawn } from "node:child_process";
import https from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Receiver, startHttpsReceiver, type TestCa, testCertificates } from "../harness/https-receiver.js";

interface ChildResult {
  status?: number;
  body?: string;
  error?: { code?: string; message: string };
}

/** POSTs `body` as JSON to `url` from a fresh Node process, with NODE_EXTRA_CA_CERTS=caFile unless it is undefined. */
function postFromChild(url: string, body: unknown, caFile: string | undefined): Promise<ChildResult> {
  const script = `
    const https = require("node:https");
    const { url, body } = ${JSON.stringify({ url, body: JSON.stringify(body) })};
    const req = https.request(url + "/hooks/order?x=1", {
      method: "POST",
      headers: { "content-type": "application/json", "x-test-signature": "sig-1", "content-length": Buffer.byteLength(body) },
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (text += c));
      res.on("end", () => process.stdout.write(JSON.stringify({ status: res.statusCode, body: text })));
    });
    req.on("error", (e) => process.stdout.write(JSON.stringify({ error: { code: e.code, message: e.message } })));
    req.end(body);
  `;
  // A minimal environment: nothing inherited may loosen or widen TLS trust.
  const env: Record<string, string> = { PATH: process.env.PATH ?? "" };
  if (caFile !== undefined) env.NODE_EXTRA_CA_CERTS = caFile;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["-e", script], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += c));
    child.stderr.on("data", (c) => (err += c));
    child.on("error", reject);
    child.on("close", (code) => {
      try {
        resolve(JSON.parse(out) as ChildResult);
      } catch {
        reject(new Error(`child exited ${code}: stdout=${out} stderr=${err}`));
      }
    });
  });
}

interface Answer {
  status?: number;
  body?: string;
  headers?: Record<string, string | string[] | undefined>;
  error?: NodeJS.ErrnoException;
  ms: number;
  reusedSocket?: boolean;
}

/** A request from this process, trusting only `ca`. */
function request(url: string, options: https.RequestOptions & { ca: string; body?: string }): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = https.request(url, { method: "GET", agent: false, ...options }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (text += c));
      res.on("end", () =>
        resolve({
          status: res.statusCode,
          body: text,
          headers: res.headers,
          ms: performance.now() - started,
          reusedSocket: req.reusedSocket,
        }),
      );
    });
    req.on("error", (error) => resolve({ error, ms: performance.now() - started }));
    req.end(options.body);
  });
}

describe("https receiver", () => {
  let certs: TestCa;
  let receiver: Receiver;

  beforeAll(async () => {
    certs = await testCertificates(["hooks.test"]);
    receiver = await startHttpsReceiver({ extraNames: ["hooks.test"] });
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it("makes the CA and certificate once per process", async () => {
    expect(certs.caPem).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(certs.cert).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect(certs.key).toMatch(/PRIVATE KEY-----/);
    expect(await testCertificates(["hooks.test"])).toBe(await testCertificates(["HOOKS.test"]));
    const other = await testCertificates(["other.test"]);
    expect(other.caFile).toBe(certs.caFile);
    expect(other.cert).not.toBe(certs.cert);
    await expect(testCertificates(["bad name,DNS:evil"])).rejects.toThrow(/not a DNS name/);
  });

  it("is trusted by a child Node process given NODE_EXTRA_CA_CERTS and records the request", async () => {
    receiver.respond(() => ({ status: 200, body: "ok" }));
    const before = receiver.requests.length;
    const sent = Date.now();
    const result = await postFromChild(receiver.url, { event: "order.paid", id: 42 }, certs.caFile);
    expect(result).toEqual({ status: 200, body: "ok" });
    const [got] = (await receiver.waitFor(before + 1)).slice(before);
    expect(got!.method).toBe("POST");
    expect(got!.path).toBe("/hooks/order?x=1");
    expect(JSON.parse(got!.body.toString("utf8"))).toEqual({ event: "order.paid", id: 42 });
    expect(got!.headers["content-type"]).toBe("application/json");
    expect(got!.headers["x-test-signature"]).toBe("sig-1");
    expect(got!.headers.host).toBe(`127.0.0.1:${receiver.port}`);
    expect(got!.receivedAt).toBeGreaterThanOrEqual(sent);
    expect(receiver.url).toBe(`https://127.0.0.1:${receiver.port}`);
  });

  it("is not trusted by a child Node process without NODE_EXTRA_CA_CERTS", async () => {
    const before = receiver.requests.length;
    const result = await postFromChild(receiver.url, { event: "x" }, undefined);
    expect(result.status).toBeUndefined();
    expect(result.error?.code).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|SELF_SIGNED/);
    expect(receiver.requests.length).toBe(before);
  });

  it("verifies as localhost and as the extra names, and not as other names", async () => {
    const viaLocalhost = await request(`https://localhost:${receiver.port}/l`, { ca: certs.caPem, family: 4 });
    expect(viaLocalhost.error).toBeUndefined();
    expect(viaLocalhost.status).toBe(200);

    const viaName = await request(`${receiver.url}/n`, {
      ca: certs.caPem,
      servername: "hooks.test",
      headers: { host: "hooks.test" },
    });
    expect(viaName.error).toBeUndefined();
    expect(viaName.status).toBe(200);

    const wrong = await request(`${receiver.url}/w`, { ca: certs.caPem, servername: "nope.test" });
    expect(wrong.error?.code).toBe("ERR_TLS_CERT_ALTNAME_INVALID");
  });

  it("answers with the status and body it is told, after the delay, with Content-Length and keep-alive", async () => {
    receiver.respond((req, index) => ({
      status: 500,
      body: `failed ${req.path} #${index}`,
      delayMs: 300,
      headers: { "x-a": "1" },
    }));
    const agent = new https.Agent({ keepAlive: true, ca: certs.caPem, maxSockets: 1 });
    try {
      const first = await request(`${receiver.url}/slow`, { ca: certs.caPem, agent });
      const index = receiver.requests.length - 1;
      expect(first.status).toBe(500);
      expect(first.body).toBe(`failed /slow #${index}`);
      expect(first.headers?.["content-length"]).toBe(String(Buffer.byteLength(first.body!)));
      expect(first.headers?.["content-type"]).toBe("text/plain; charset=utf-8");
      expect(first.headers?.["x-a"]).toBe("1");
      expect(first.ms).toBeGreaterThanOrEqual(300 - 15);

      receiver.respond(() => ({ status: 204 }));
      const second = await request(`${receiver.url}/again`, { ca: certs.caPem, agent });
      expect(second.status).toBe(204);
      expect(second.reusedSocket).toBe(true);
    } finally {
      agent.destroy();
      receiver.respond(() => ({ status: 200, body: "ok" }));
    }
  });

  it("answers 500 when respond() throws", async () => {
    receiver.respond(() => {
      throw new Error("boom");
    });
    const answer = await request(`${receiver.url}/throw`, { ca: certs.caPem });
    expect(answer.status).toBe(500);
    expect(answer.body).toContain("boom");
    receiver.respond(() => ({ status: 200, body: "ok" }));
  });

  it("hangs up without answering, after recording the request", async () => {
    receiver.respond(() => ({ status: 200, hangUp: true }));
    const before = receiver.requests.length;
    const answer = await request(`${receiver.url}/hang`, { ca: certs.caPem, method: "POST", body: "payload" });
    expect(answer.status).toBeUndefined();
    expect(answer.error?.code).toBe("ECONNRESET");
    expect(receiver.requests.length).toBe(before + 1);
    expect(receiver.requests[before]!.body.toString()).toBe("payload");
    receiver.respond(() => ({ status: 200, body: "ok" }));
  });

  it("waitFor rejects on timeout naming the count", async () => {
    const n = receiver.requests.length + 5;
    const started = performance.now();
    await expect(receiver.waitFor(n, 200)).rejects.toThrow(
      `waitFor(${n}): timed out after 200 ms, ${n - 5} request(s) received of ${n} expected`,
    );
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
  });

  it("close() resolves while a delayed reply is pending, and rejects pending waits", async () => {
    const own = await startHttpsReceiver();
    own.respond(() => ({ status: 200, body: "late", delayMs: 30_000 }));
    const pending = request(`${own.url}/slow`, { ca: certs.caPem });
    await own.waitFor(1);
    const waiting = own.waitFor(2, 30_000);
    const started = performance.now();
    await own.close();
    expect(performance.now() - started).toBeLessThan(2000);
    await expect(waiting).rejects.toThrow("waitFor(2): the receiver closed, 1 request(s) received of 2 expected");
    const answer = await pending;
    expect(answer.status).toBeUndefined();
    expect(answer.error).toBeDefined();
    await own.close(); // twice is fine
  });
});
