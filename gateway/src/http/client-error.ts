/**
 * Requests Node's HTTP parser refuses before the app sees them: a request line and headers over
 * Node's limit (`http.maxHeaderSize`, 16 KiB), or bytes that are not HTTP. Node would answer a bare
 * 431 or 400 with no body; the gateway answers 400 in the error shape, a status every route describes.
 */
import http from "node:http";
import type { Duplex } from "node:stream";
import { errorBody } from "./errors.js";

export function answerClientErrors(server: http.Server): void {
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === "ECONNRESET" || !socket.writable) {
      socket.destroy();
      return;
    }
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
