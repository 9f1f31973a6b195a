/**
 * A local HTTP server answering the one Stripe API call billing makes (POST /v1/checkout/sessions) the
 * way Stripe does, so the official library runs unmodified against it. It records what it received.
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface SeenRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  form: URLSearchParams;
}

export interface StripeApi {
  url: string;
  seen: SeenRequest[];
  /** Answer the next request with a Stripe 400 error. */
  failNext(): void;
  stop(): Promise<void>;
}

export async function startStripeApi(): Promise<StripeApi> {
  const seen: SeenRequest[] = [];
  let fail = false;
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const form = new URLSearchParams(body);
      seen.push({ method: req.method!, path: req.url!, authorization: req.headers.authorization, form });
      res.setHeader("content-type", "application/json");
      if (fail) {
        fail = false;
        res.statusCode = 400;
        res.end(JSON.stringify({ error: { type: "invalid_request_error", message: "No such price" } }));
        return;
      }
      if (req.method === "POST" && req.url === "/v1/checkout/sessions") {
        const id = `cs_test_${randomUUID().replace(/-/g, "")}`;
        res.end(
          JSON.stringify({
            id,
            object: "checkout.session",
            url: `https://checkout.stripe.com/c/pay/${id}`,
            amount_total: Number(form.get("line_items[0][price_data][unit_amount]")),
            currency: "usd",
            payment_status: "unpaid",
            status: "open",
            metadata: {},
          }),
        );
        return;
      }
      res.statusCode = 404;
      res.end(JSON.stringify({ error: { type: "invalid_request_error", message: "unknown route" } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    failNext: () => {
      fail = true;
    },
    stop: () => new Promise((r) => server.close(() => r())),
  };
}
