/**
 * The receiver, as an attempt reaches it: one signed POST through the guarded dialer
 * (@toolport/kit/outbound: public addresses only, checked on the address dialled). It never throws for
 * what the receiver or the network does: the outcome says what happened, with the first KiB of the answer.
 */
import { type Outbound, outboundFailureKind } from "@toolport/kit/outbound";
import { signatureHeader } from "@toolport/webhooks-verify";
import { request } from "undici";
import type { AttemptOutcome, ClaimedDelivery } from "../domain/model.js";

export const USER_AGENT = "Svc-Webhooks/1.0";
const RESPONSE_BODY_BYTES = 1024;

/** One signed POST; never throws for what the receiver or the network does. */
export async function post(
  outbound: Outbound,
  row: Pick<ClaimedDelivery, "id" | "url" | "event" | "body">,
  secrets: string[],
  timeoutMs: number,
): Promise<AttemptOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await request(row.url, {
      method: "POST",
      dispatcher: outbound.agent,
      signal,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "x-svc-event": row.event,
        "x-svc-delivery": row.id,
        "x-svc-signature": signatureHeader(secrets, row.body, Math.floor(Date.now() / 1000)),
      },
      body: row.body,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        chunks.push(chunk as Buffer);
        size += (chunk as Buffer).length;
        if (size >= RESPONSE_BODY_BYTES) break;
      }
    } catch {
      // The status is what counts; a body cut short is kept as far as it came.
    } finally {
      res.body.destroy();
    }
    const text = Buffer.concat(chunks).subarray(0, RESPONSE_BODY_BYTES).toString("utf8");
    return { status: res.statusCode, error: null, durationMs: elapsed(), body: text };
  } catch (err) {
    return { status: null, error: errorClass(err), durationMs: elapsed(), body: null };
  }
}

/** What kind of failure an attempt without a response was (the history's `error`). */
export function errorClass(err: unknown): string {
  const { kind } = outboundFailureKind(err);
  if (kind === "address_not_allowed" || kind === "timeout") return kind;
  return kind === "tls_error" ? "tls_error" : "connection_error";
}
