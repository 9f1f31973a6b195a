/**
 * Consent by asking the person (issue 31). A key with the confirmation flag makes the services refuse a
 * call that writes, sends, spends or deletes until it comes back with the `confirm_token` they issued
 * (the element's `consent` object). Handing that token to the model lets the model confirm for the
 * person. So when the MCP client said it can ask its user (the `elicitation` capability, form mode, in a
 * 2026-07-28 request's `_meta`), batch_execute_tools answers `input_required` instead: one question per
 * call that needs consent, showing the tool, the exact parameters and the price. The client asks, then
 * retries the same call with the answers and the `requestState` this server minted:
 *
 * - accept (with `confirm: true`) runs that call, once: the state holds the services' own single-use
 *   confirm token, so a replayed state finds the token used and nothing runs again;
 * - decline or cancel ends that call with an element that says so (`error_code: consent_declined`);
 * - the state is HMAC-sealed by the SDK's codec, bound to the caller (a hash of its key and
 *   organization), the method and the tool, and expires with the confirm tokens (ten minutes); the
 *   arguments' hash is inside it. A state that is altered, expired, another caller's or for other
 *   arguments is refused before anything runs.
 *
 * The calls of the batch that needed no consent ran in the first round; their elements travel in the
 * state and are answered with the rest, in input order.
 *
 * An upstream MCP tool that asks a person a question (an element failing with `mcp_input_required`
 * whose `error_details` hold the questions and the execution service's continuation) is asked in the
 * same round: one question per upstream question, keyed `upstream_<index>_<key>`, the continuation in
 * the state. The retry sends the answers back through the gateway (`input_responses`), and the element
 * becomes whatever the tool finally answers; a tool that asks again (or a call that now needs consent)
 * makes another round. The continuation is single use at the execution service, so a replayed state
 * runs nothing again there either. A client that cannot ask its user gets the element's error saying
 * the tool needs a person's input (callerElement). askUpstream asks one element's questions through
 * any asking function (a 2025-11-25 client's elicitInput, say) and returns the `input_responses`.
 *
 *
 * Such a client gets batch_execute_tools synchronously even when it declares the Tasks extension (tasks.ts):
 * a task cannot ask the person yet, and its result would carry the confirm tokens to the model. A client
 * with tasks and without elicitation gets the consent objects in the task's result, as it would
 * synchronously.
 *
 * A 2025-11-25 client that declared elicitation in `initialize` holds a session (legacy-sessions.ts),
 * and is asked the same way: the SDK's legacy shim sends the `input_required` questions as
 * `elicitation/create` requests on the call's stream and runs the handler again with the answers and
 * the state. A 2025-11-25 client without a session keeps the consent object.
 */
import { createHash } from "node:crypto";
import {
  type ClientCapabilities,
  createRequestStateCodec,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  type RequestStateCodec,
} from "@modelcontextprotocol/server";
import { canonicalJson } from "@toolport/kit/json-values";
import { callerIdentity, callerOf, type HandlerExtra } from "./results.js";

/** As long as a confirm token lives (execution's CONSENT_TTL_SECONDS). */
export const CONSENT_STATE_TTL_SECONDS = 600;
/** The shown parameters are cut here; the call runs with all of them. */
const MAX_SHOWN_PARAMETERS = 2_000;

/** An element of batch_execute_tools' answer, in the MCP surface's fields. */
export type Element = Record<string, unknown>;

export interface ConsentState {
  /** Hash of the batch's arguments: the retry must be the same call. */
  args: string;
  /** The answer's elements by position; null where the call waits for the person. */
  done: (Element | null)[];
  /** The calls that wait, with the services' confirm token for each. */
  pending: { index: number; token: string }[];
  /** The calls whose upstream tool asked the person: the execution service's continuation and the question keys. */
  upstream?: { index: number; continuation: string; keys: string[] }[];
}

/** One question an upstream MCP tool asked (the execution service's `error_details.questions[]`). */
export interface UpstreamQuestion {
  key: string;
  message: string;
  requested_schema: Record<string, unknown>;
}

/** An element's upstream questions and the continuation that answers them. */
export interface UpstreamAsk {
  continuation: string;
  questions: UpstreamQuestion[];
}

/** A person's answer to one question (an MCP ElicitResult). */
export interface PersonAnswer {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown>;
}

/** `input_responses` of a repeated call (gateway POST /v1/tools/call). */
export interface InputResponses {
  continuation: string;
  answers: Record<string, PersonAnswer>;
}

export type ConsentCodec = RequestStateCodec<ConsentState>;

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** Binds a state to the request's method, tool and caller (the key itself never enters the state). */
export function consentCodec(key: string | Uint8Array): ConsentCodec {
  return createRequestStateCodec<ConsentState>({
    key,
    ttlSeconds: CONSENT_STATE_TTL_SECONDS,
    bind: (ctx) => {
      const headers = (ctx as HandlerExtra).http?.req?.headers;
      const caller = callerIdentity(callerOf(ctx as HandlerExtra));
      return `${ctx.mcpReq.method}\0${headers?.get("mcp-name") ?? ""}\0${sha256(caller)}`;
    },
  });
}

export function argumentsHash(args: unknown): string {
  return sha256(canonicalJson(args ?? {}));
}

/**
 * Whether the client of this request said it can show its user a form: in the request's `_meta`
 * (2026-07-28), or in the `initialize` of its session (2025-11-25, `initialized`; a client served
 * without a session has none).
 */
export function canAskPerson(extra: HandlerExtra, initialized?: ClientCapabilities): boolean {
  const envelope = extra.mcpReq?.envelope;
  const capabilities = envelope ? envelope["io.modelcontextprotocol/clientCapabilities"] : initialized;
  const elicitation = (capabilities as { elicitation?: Record<string, unknown> } | undefined)?.elicitation;
  if (!elicitation || typeof elicitation !== "object") return false;
  // An empty object means form mode (the spec's default); otherwise form must be named.
  return Object.keys(elicitation).length === 0 || "form" in elicitation;
}

const questionSchema = {
  type: "object" as const,
  properties: {
    confirm: {
      type: "boolean" as const,
      title: "Run this call",
      description: "Yes runs it once; no runs nothing.",
      default: false,
    },
  },
  required: ["confirm"],
};

export interface ToolFacts {
  /** Price of one call in cents; undefined when the catalog did not answer. */
  priceCents?: number;
}

function priceWords(facts: ToolFacts): string {
  if (facts.priceCents === undefined)
    return "Price: unknown (the catalog did not answer); a priced tool is paid from your wallet.";
  if (facts.priceCents === 0) return "Price: free.";
  const dollars = Math.floor(facts.priceCents / 100);
  const cents = String(facts.priceCents % 100).padStart(2, "0");
  return `Price: $${dollars}.${cents} for this call, paid from your Toolport wallet.`;
}

/** The question shown to the person for one call: the tool, its exact parameters and the price. */
export function question(consent: { tool_name: string; parameters: unknown }, facts: ToolFacts): string {
  let shown = JSON.stringify(consent.parameters ?? {}, null, 2);
  if (shown.length > MAX_SHOWN_PARAMETERS)
    shown = `${shown.slice(0, MAX_SHOWN_PARAMETERS)}\n... (cut here; the call sends all of it)`;
  return (
    `Your assistant wants to run "${consent.tool_name}", which writes, sends, spends or deletes.\n` +
    `Parameters:\n${shown}\n${priceWords(facts)}\nYes runs this call once; no runs nothing.`
  );
}

/** The questions of an element whose upstream MCP tool asked a person; undefined for any other element. */
export function upstreamAsk(element: Element): UpstreamAsk | undefined {
  if (element.error_code !== "mcp_input_required") return undefined;
  const details = element.error_details as { continuation?: unknown; questions?: unknown } | undefined;
  if (typeof details?.continuation !== "string" || !Array.isArray(details.questions) || details.questions.length === 0)
    return undefined;
  return { continuation: details.continuation, questions: details.questions as UpstreamQuestion[] };
}

/** What the person reads for an upstream question: who asks, then the tool's own words. */
export function upstreamQuestionText(toolId: string, question: UpstreamQuestion): string {
  return `A tool your assistant is running through Toolport (${toolId}) asks:\n${question.message}`;
}

/**
 * The per-call "ask the person" step: puts each of an element's upstream questions to the person with
 * `ask` (e.g. a 2025-11-25 client's `ctx.mcpReq.elicitInput`, form mode) and returns the
 * `input_responses` to repeat the same call with (runBatch / answerUpstream in execution.ts).
 */
export async function askUpstream(
  toolId: string,
  asked: UpstreamAsk,
  ask: (request: { mode: "form"; message: string; requestedSchema: Record<string, unknown> }) => Promise<PersonAnswer>,
): Promise<InputResponses> {
  const answers: Record<string, PersonAnswer> = {};
  for (const question of asked.questions) {
    const answer = await ask({
      mode: "form",
      message: upstreamQuestionText(toolId, question),
      requestedSchema: question.requested_schema,
    });
    answers[question.key] =
      answer.action === "accept" ? { action: "accept", content: answer.content ?? {} } : { action: answer.action };
    // A person who declines or dismisses one question is not asked the next.
    if (answer.action !== "accept") break;
  }
  return { continuation: asked.continuation, answers };
}

/** The answers a retried 2026-07-28 round carries for element `index`'s upstream questions. */
export function upstreamAnswers(
  extra: HandlerExtra,
  entry: { index: number; continuation: string; keys: string[] },
): InputResponses {
  const answers: Record<string, PersonAnswer> = {};
  for (const key of entry.keys) {
    const view = inputResponse(extra.mcpReq?.inputResponses, `upstream_${entry.index}_${key}`);
    if (view.kind !== "elicit") continue;
    answers[key] =
      view.action === "accept"
        ? { action: "accept", content: (view.content ?? {}) as Record<string, unknown> }
        : { action: view.action };
  }
  return { continuation: entry.continuation, answers };
}

/**
 * An element as the caller gets it: the continuation stays here. An upstream question that is not
 * passed on (the client cannot ask its user) says so in the element's error.
 */
export function callerElement(element: Element): Element {
  if (!("error_details" in element)) return element;
  const { error_details: _, ...rest } = element;
  const asked = upstreamAsk(element);
  if (!asked) return rest;
  const first = asked.questions[0]?.message;
  const says = first ? ` (it asks: ${JSON.stringify(first.slice(0, 300))})` : "";
  return {
    ...rest,
    error:
      `the MCP tool needs a person's input before it can finish${says}, and this MCP client cannot ask its user ` +
      "(it did not declare the elicitation capability, form mode): call it from a client that can, or ask the person yourself and use a tool that does not ask",
  };
}

/**
 * One round's answer: one question per call waiting for consent and per question an upstream tool
 * asked, and the sealed state. The calls that are done travel in the state as the caller will get them.
 */
export async function askPerson(
  codec: ConsentCodec,
  extra: HandlerExtra,
  args: unknown,
  elements: Element[],
  facts: (toolId: string) => ToolFacts,
): Promise<InputRequiredResult> {
  const inputRequests: Record<string, ReturnType<typeof inputRequired.elicit>> = {};
  const pending: ConsentState["pending"] = [];
  const upstream: NonNullable<ConsentState["upstream"]> = [];
  const done = elements.map((element, index) => {
    const asked = upstreamAsk(element);
    if (asked) {
      upstream.push({ index, continuation: asked.continuation, keys: asked.questions.map((q) => q.key) });
      for (const question of asked.questions) {
        inputRequests[`upstream_${index}_${question.key}`] = inputRequired.elicit({
          message: upstreamQuestionText(String(element.tool_id), question),
          requestedSchema: question.requested_schema as typeof questionSchema,
        });
      }
      return null;
    }
    const consent = element.consent as
      | { tool_id: string; tool_name: string; parameters: unknown; confirm_token: string }
      | undefined;
    if (!consent) return callerElement(element);
    pending.push({ index, token: consent.confirm_token });
    inputRequests[`consent_${index}`] = inputRequired.elicit({
      message: question(consent, facts(consent.tool_id)),
      requestedSchema: questionSchema,
    });
    return null;
  });
  const state: ConsentState = { args: argumentsHash(args), done, pending, ...(upstream.length > 0 ? { upstream } : {}) };
  return inputRequired({ inputRequests, requestState: await codec.mint(state, extra as never) });
}

/** The person's answer for one waiting call: run it, or the reason it did not run. */
export function answerOf(extra: HandlerExtra, index: number): "run" | "declined" | "cancelled" | "unanswered" {
  const view = inputResponse(extra.mcpReq?.inputResponses, `consent_${index}`);
  if (view.kind !== "elicit") return "unanswered";
  if (view.action === "accept") return view.content?.confirm === true ? "run" : "declined";
  return view.action === "cancel" ? "cancelled" : "declined";
}

/** The element of a call the person did not agree to: nothing ran. */
export function notRun(toolId: string, why: "declined" | "cancelled" | "unanswered"): Element {
  const text = {
    declined: "declined: the person was asked and did not agree to run this call; nothing ran",
    cancelled: "cancelled: the person dismissed the question; nothing ran",
    unanswered: "not answered: the retry carried no answer for this call; nothing ran",
  }[why];
  return {
    tool_id: toolId,
    success: false,
    result: null,
    truncated: false,
    cursor: null,
    error: text,
    _meta: { execution_id: null },
    error_code: "consent_declined",
  };
}
