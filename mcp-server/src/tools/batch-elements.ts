/**
 * A gateway batch element in the MCP surface's fields: what batch_execute_tools answers, and what a
 * batch task answers once it ended (tasks.ts), so both read the same.
 */
import type { BatchElement } from "@toolport/client";

/** A gateway batch element in the MCP surface's fields. */
export function mcpElement(e: BatchElement): Record<string, unknown> {
  const meta: Record<string, unknown> = { execution_id: e.execution_id ?? null };
  if (e._meta?.redaction) meta.redaction = e._meta.redaction;
  if (e._meta?.truncation_note) meta.truncation_note = e._meta.truncation_note;
  const out: Record<string, unknown> = {
    tool_id: e.tool_id,
    success: e.success,
    result: e.result ?? null,
    truncated: e.truncated ?? false,
    cursor: e.cursor ?? null,
    error: e.error ?? null,
    _meta: meta,
  };
  if (e.error_code) out.error_code = e.error_code;
  if (e.passthrough_reason !== undefined) out.passthrough_reason = e.passthrough_reason;
  if (e.consent) out.consent = e.consent;
  // Kept for consent.ts (an upstream's questions and continuation); callerElement takes it out before a
  // caller sees the element.
  if (e.error_details) out.error_details = e.error_details;
  if (e.projection) out.projection = e.projection;
  return out;
}
