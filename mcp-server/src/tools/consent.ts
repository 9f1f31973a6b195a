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

/** The first round's answer: one question per waiting call, and the sealed state. */
export async function askPerson(
  codec: ConsentCodec,
  extra: HandlerExtra,
  args: unknown,
  elements: Element[],
  facts: (toolId: string) => ToolFacts,
): Promise<InputRequiredResult> {
  const inputRequests: Record<string, ReturnType<typeof inputRequired.elicit>> = {};
  const pending: ConsentState["pending"] = [];
  const done = elements.map((element, index) => {
    const consent = element.consent as
      | { tool_id: string; tool_name: string; parameters: unknown; confirm_token: string }
      | undefined;
    if (!consent) return element;
    pending.push({ index, token: consent.confirm_token });
    inputRequests[`consent_${index}`] = inputRequired.elicit({
      message: question(consent, facts(consent.tool_id)),
      requestedSchema: questionSchema,
    });
    return null;
  });
  const state: ConsentState = { args: argumentsHash(args), done, pending };
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
