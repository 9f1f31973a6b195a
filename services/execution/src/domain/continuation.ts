/**
 * Questions an MCP tool asks mid-call, and the continuation that carries its caller's answers back
 * (issue 31, "the client face"). A call whose upstream needs a person's input fails with
 * `mcp_input_required`; its details hold the questions and a continuation. The caller asks its person,
 * then repeats the same call with `input_responses: {continuation, answers}`.
 *
 * The continuation is signed here (HMAC-SHA256, `ic1.<payload>.<signature>`), not encrypted: it names
 * what the adapter resumes (a 2026-07-28 upstream's `requestState`, which travels through clients by
 * design, or the id of a 2025-11-25 elicitation waiting in this process) and is bound to the caller
 * (key, else account), the tool and a hash of the exact tool input. It expires (ten minutes for a
 * `requestState`; a waiting elicitation is cancelled sooner, see adapters/mcp.ts) and is used once (its
 * id is recorded with the confirm tokens' ids), so a replayed answer never runs the tool again.
 */
import { createHmac, randomUUID } from "node:crypto";
import type { JsonObject } from "@toolport/kit/json-values";
import { parametersHash } from "./consent.js";
import { openToken, sealToken } from "./signed-token.js";

const PREFIX = "ic1";
/** A 2026-07-28 upstream's requestState: as long as a confirm token. */
export const STATE_CONTINUATION_TTL_SECONDS = 600;

/** One question, as the caller reads it. */
export interface Question {
  key: string;
  message: string;
  requested_schema: JsonObject;
}

/** What the adapter resumes: the upstream's own state, or an elicitation waiting in this process. */
export type UpstreamResume =
  | { kind: "state"; requestState?: string; keys: string[] }
  | { kind: "pending"; id: string; keys: string[]; expiresAt: number };

/** A tool's questions and how to resume it, as an adapter reports them. */
export interface InputAsk {
  questions: Question[];
  resume: UpstreamResume;
}

/** A person's answer to one question (the MCP ElicitResult). */
export interface Answer {
  action: "accept" | "decline" | "cancel";
  content?: JsonObject;
}

/** `input_responses` as the caller sends it. */
export interface InputResponses {
  continuation: string;
  answers: Record<string, Answer>;
}

/** What an adapter resumes a call with: the verified resume and the answers. */
export interface Resumption {
  resume: UpstreamResume;
  answers: Record<string, Answer>;
}

export interface ContinuationSubject {
  /** The API key id, else the account id. */
  subject: string;
  toolId: string;
  input: unknown;
}

interface Payload {
  jti: string;
  sub: string;
  tool: string;
  ph: string;
  exp: number;
  up: UpstreamResume;
}

export type ContinuationProblem = "invalid" | "expired" | "other_caller" | "other_tool" | "input_changed" | "unknown_answer";

export type ContinuationCheck =
  | { ok: true; jti: string; expiresAt: Date; resume: UpstreamResume }
  | { ok: false; problem: ContinuationProblem };

export const continuationProblemMessage: Record<ContinuationProblem | "used", string> = {
  invalid: "input_responses.continuation is not valid",
  expired: "input_responses.continuation has expired; call the tool again to be asked again",
  other_caller: "input_responses.continuation was issued to another caller",
  other_tool: "input_responses.continuation was issued for another tool",
  input_changed: "input_responses.continuation was issued for a different tool_input; send the same tool_input",
  unknown_answer: "input_responses.answers names a question the tool did not ask",
  used: "input_responses.continuation was used already (an answer is sent once); call the tool again to be asked again",
};

export class Continuations {
  constructor(private readonly secret: Buffer) {}

  issue(subject: ContinuationSubject, resume: UpstreamResume, now = new Date()): { token: string; expiresAt: Date } {
    const exp =
      resume.kind === "pending"
        ? Math.floor(resume.expiresAt / 1000)
        : Math.floor(now.getTime() / 1000) + STATE_CONTINUATION_TTL_SECONDS;
    const payload: Payload = {
      jti: randomUUID(),
      sub: subject.subject,
      tool: subject.toolId,
      ph: parametersHash(subject.input),
      exp,
      up: resume,
    };
    return { token: sealToken(PREFIX, this.secret, payload), expiresAt: new Date(exp * 1000) };
  }

  /** Signature, expiry, binding and the answers' keys; single use is the store's part (the jti). */
  verify(responses: InputResponses, expected: ContinuationSubject, now = new Date()): ContinuationCheck {
    const payload = openToken<Payload>(PREFIX, this.secret, responses.continuation);
    if (!payload) return { ok: false, problem: "invalid" };
    if (typeof payload.exp !== "number" || payload.exp * 1000 <= now.getTime()) return { ok: false, problem: "expired" };
    if (payload.sub !== expected.subject) return { ok: false, problem: "other_caller" };
    if (payload.tool !== expected.toolId) return { ok: false, problem: "other_tool" };
    if (payload.ph !== parametersHash(expected.input)) return { ok: false, problem: "input_changed" };
    if (Object.keys(responses.answers).some((key) => !payload.up.keys.includes(key)))
      return { ok: false, problem: "unknown_answer" };
    return { ok: true, jti: payload.jti, expiresAt: new Date(payload.exp * 1000), resume: payload.up };
  }
}

/** A separate key for continuations, derived from the consent secret (one secret to configure). */
export function continuationKey(consentSecret: Buffer): Buffer {
  return createHmac("sha256", consentSecret).update("toolport mcp continuation v1").digest();
}

/** `input_responses` parsed and checked for shape; a string saying what is wrong otherwise. */
export function parseInputResponses(value: unknown): InputResponses | string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "input_responses must be an object";
  const { continuation, answers } = value as { continuation?: unknown; answers?: unknown };
  if (typeof continuation !== "string" || continuation === "")
    return "input_responses.continuation must be the continuation string of the mcp_input_required error";
  if (typeof answers !== "object" || answers === null || Array.isArray(answers))
    return "input_responses.answers must be an object of answers keyed by question key";
  const out: Record<string, Answer> = {};
  for (const [key, answer] of Object.entries(answers)) {
    const { action, content } = (answer ?? {}) as { action?: unknown; content?: unknown };
    if (action !== "accept" && action !== "decline" && action !== "cancel")
      return `input_responses.answers.${key}.action must be "accept", "decline" or "cancel"`;
    if (content !== undefined && (typeof content !== "object" || content === null || Array.isArray(content)))
      return `input_responses.answers.${key}.content must be an object`;
    out[key] = content === undefined || action !== "accept" ? { action } : { action, content: content as JsonObject };
  }
  return { continuation, answers: out };
}
