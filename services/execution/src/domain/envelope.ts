/**
 * MCP `tools/call` results. The stored result is the server's envelope ({content, structuredContent?,
 * isError?}); what a caller gets back is the payload: the structured content (the tool's declared
 * output, MCP's structured result), else the JSON inside the first text block, else the text, else the
 * envelope as it is.
 */

import { mcpStructured, mcpTextJson } from "@toolport/kit/json-path";
import { getOwn, isObject, type Json } from "@toolport/kit/json-values";

export function unwrapMcpEnvelope(envelope: Json): Json {
  const structured = mcpStructured(envelope);
  if (structured !== undefined) return structured;
  const inner = mcpTextJson(envelope);
  if (inner !== undefined) return inner;
  if (!isObject(envelope)) return envelope;
  const text = envelopeText(envelope);
  const content = getOwn(envelope, "content");
  if (text !== undefined && Array.isArray(content) && content.every((b) => isObject(b) && b.type === "text")) return text;
  return envelope;
}

/** The text blocks of an envelope joined, or undefined when it has none. */
export function envelopeText(envelope: Json): string | undefined {
  if (!isObject(envelope)) return undefined;
  const content = getOwn(envelope, "content");
  if (!Array.isArray(content)) return undefined;
  const texts = content
    .filter((b) => isObject(b) && b.type === "text" && typeof b.text === "string")
    .map((b) => (b as { text: string }).text);
  return texts.length > 0 ? texts.join("\n") : undefined;
}

export function isMcpError(envelope: Json): boolean {
  return isObject(envelope) && envelope.isError === true;
}
