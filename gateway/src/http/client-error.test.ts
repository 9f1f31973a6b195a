import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerClientErrors } from "./client-error.js";

describe("requests Node's parser refuses", () => {
  let server: http.Server;
  let base: string;

  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end("{}"));
    answerClientErrors(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("answers 400 headers_too_large in the error shape, also to a client still sending a large body", async () => {
    // The client writes its whole body after the request line: the answer must reach it all the same,
    // not a reset connection (the fuzz test's long query string with a 1 MB body).
    for (const size of [0, 1_100_000, 8_000_000]) {
      const res = await fetch(`${base}/v1/x?q=${"x".repeat(120_000)}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: size ? JSON.stringify({ pad: "z".repeat(size) }) : undefined,
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("headers_too_large");
    }
  });

  it("keeps reading what the client still sends after the answer, instead of resetting the connection", async () => {
    const port = (server.address() as AddressInfo).port;
    // Half-open like an HTTP client still sending its body: its side stays open after the answer ends.
    const socket = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    socket.setNoDelay(true);
    const errors: string[] = [];
    let answer = "";
    socket.on("error", (err: NodeJS.ErrnoException) => errors.push(err.code ?? err.message));
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
    });
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    const pause = () => new Promise((resolve) => setTimeout(resolve, 150));
    socket.write(`POST /v1/x?q=${"x".repeat(120_000)} HTTP/1.1\r\nhost: x\r\ncontent-length: 3000000\r\n\r\n`);
    await pause();
    // The body goes on arriving after the answer, in several chunks.
    for (let i = 0; i < 5; i++) {
      socket.write("z".repeat(200_000));
      await pause();
    }
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain("headers_too_large");
    expect(errors, "the connection was reset while the client was still sending").toEqual([]);
    socket.destroy();
  });
});
