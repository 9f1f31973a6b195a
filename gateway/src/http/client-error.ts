/**
 * Requests Node's HTTP parser refuses before the app sees them: a request line and headers over
 * Node's limit (`http.maxHeaderSize`, 16 KiB), or bytes that are not HTTP. Node would answer a bare
 * 431 or 400 with no body; the gateway answers 400 in the error shape, a status every route describes.
 */
import http from "node:http";
import type { Duplex } from "node:stream";
import { errorBody } from "./errors.js";

/**
 * How long a refused connection is kept open after its answer, reading and discarding what the client
 * still sends (a lingering close): closing at once, with its body still arriving, would reset the
 * connection, and the client could lose the answer before reading it.
 */
const LINGER_MS = 2_000;

export function answerClientErrors(server: http.Server): void {
  const answered = new WeakSet<Duplex>();
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    // Node's parser reports the same error again for every later chunk of the refused request: the
    // answer is already on its way, and the linger timer closes the connection.
    if (answered.has(socket)) return;
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
    answered.add(socket);
    socket.resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
    const body = JSON.stringify(
      err.code === "HPE_HEADER_OVERFLOW"
        ? errorBody(
            "headers_too_large",
            `the request line and headers are larger than the limit of ${http.maxHeaderSize} bytes`,
            {
              limit_bytes: http.maxHeaderSize,
            },
          )
        : errorBody("bad_request", "the request is not valid HTTP"),
    );
    socket.end(
      `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  });
}
