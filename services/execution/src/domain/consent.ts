/**
 * The consent handshake (DESIGN.md): with a key whose `require_confirmation` is set, a call that writes,
 * sends, spends or deletes (an HTTP tool whose method is not GET/HEAD/OPTIONS, or a tool its publisher
 * marked side-effecting) is not run; the caller gets a confirm token bound to the key, the tool and a
 * hash of the exact parameters, valid for ten minutes and usable once (the token id is recorded when
 * used, see store/consents.ts).
 *
 * Token: `ct1.<base64url payload>.<base64url HMAC-SHA256(secret, "ct1." + payload)>`.
 */
import { createHash, randomUUID } from "node:crypto";
import { canonicalJson } from "@toolport/kit/json-values";
import { openToken, sealToken } from "./signed-token.js";

export const CONSENT_TTL_SECONDS = 600;
const PREFIX = "ct1";

export interface ConsentSubject {
  /** The API key id (or the account id for a key-less caller). */
  subject: string;
  toolId: string;
  parameters: unknown;
}

interface Payload {
  jti: string;
  sub: string;
  tool: string;
  ph: string;
  exp: number;
}

export type ConsentProblem = "invalid" | "expired" | "other_key" | "other_tool" | "parameters_changed";

export type ConsentCheck = { ok: true; jti: string; expiresAt: Date } | { ok: false; problem: ConsentProblem };

export function parametersHash(parameters: unknown): string {
  return createHash("sha256")
    .update(canonicalJson(parameters ?? {}))
    .digest("hex");
}

export function needsConsent(
  tool: { serviceType: string; method: string; sideEffecting: boolean },
  requireConfirmation: boolean,
): boolean {
  if (!requireConfirmation) return false;
  if (tool.sideEffecting) return true;
  return tool.serviceType === "api" && !["GET", "HEAD", "OPTIONS"].includes(tool.method.toUpperCase());
}

export class ConsentTokens {
  constructor(private readonly secret: Buffer) {}

  issue(subject: ConsentSubject, now = new Date()): { token: string; expiresAt: Date } {
    const exp = Math.floor(now.getTime() / 1000) + CONSENT_TTL_SECONDS;
    const payload: Payload = {
      jti: randomUUID(),
      sub: subject.subject,
      tool: subject.toolId,
      ph: parametersHash(subject.parameters),
      exp,
    };
    return { token: sealToken(PREFIX, this.secret, payload), expiresAt: new Date(exp * 1000) };
  }

  /** Checks signature, expiry and binding; single use is the store's part (the jti). */
  verify(token: string, expected: ConsentSubject, now = new Date()): ConsentCheck {
    const payload = openToken<Payload>(PREFIX, this.secret, token);
    if (!payload) return { ok: false, problem: "invalid" };
    if (typeof payload.exp !== "number" || payload.exp * 1000 <= now.getTime()) return { ok: false, problem: "expired" };
    if (payload.sub !== expected.subject) return { ok: false, problem: "other_key" };
    if (payload.tool !== expected.toolId) return { ok: false, problem: "other_tool" };
    if (payload.ph !== parametersHash(expected.parameters)) return { ok: false, problem: "parameters_changed" };
    return { ok: true, jti: payload.jti, expiresAt: new Date(payload.exp * 1000) };
  }
}

export const consentProblemMessage: Record<ConsentProblem | "used", string> = {
  invalid: "the confirm_token is not valid",
  expired: "the confirm_token has expired",
  other_key: "the confirm_token was issued to another key",
  other_tool: "the confirm_token was issued for another tool",
  parameters_changed: "the confirm_token was issued for different parameters",
  used: "the confirm_token has already been used",
};
