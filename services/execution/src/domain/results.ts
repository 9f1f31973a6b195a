/**
 * Reading a stored execution back by handle (spec item 15): the whole stored result or the subtree at
 * `path` (for MCP tools tried against the JSON inside the envelope's text block first), capped to
 * `max_chars` (default 50,000, clamped to 100..2,000,000) with the same JSON-valid cap as calls.
 */

import { parsePath, selectInMcpEnvelope, selectPath } from "@toolport/kit/json-path";
import type { Json } from "@toolport/kit/json-values";
import { capResponse, findCursor, type ResponseMeta, type StoredMeta } from "./cap.js";
import { unwrapMcpEnvelope } from "./envelope.js";
import type { StoredExecution } from "./ports.js";
import type { RedactionReport } from "./redaction/redact.js";

export const DEFAULT_READ_CHARS = 50_000;
export const MIN_READ_CHARS = 100;
export const MAX_READ_CHARS = 2_000_000;

export interface ResultView {
  executionId: string;
  toolId: string;
  status: "success" | "error";
  executedAt: Date;
  error: string | null;
  path: string | null;
  result: Json;
  truncated: boolean;
  responseMeta: ResponseMeta | null;
  pathMatched?: boolean;
  storedTruncated?: true;
  storedMeta?: StoredMeta;
  redaction?: RedactionReport;
  passthroughReason?: string;
  cursor?: string;
  truncationNote?: string;
}

export function clampReadChars(value: number | undefined): number {
  if (value === undefined || Number.isNaN(value)) return DEFAULT_READ_CHARS;
  return Math.min(MAX_READ_CHARS, Math.max(MIN_READ_CHARS, Math.trunc(value)));
}

export function readStoredResult(
  stored: StoredExecution,
  pathText: string | undefined,
  maxChars: number | undefined,
): ResultView {
  const path = pathText === undefined || pathText.trim() === "" ? null : pathText;
  const steps = path === null ? null : parsePath(path);
  const view: ResultView = {
    executionId: stored.id,
    toolId: stored.toolId,
    status: stored.status,
    executedAt: stored.executedAt,
    error: stored.error,
    path,
    result: null,
    truncated: false,
    responseMeta: null,
  };
  if (stored.storedMeta) {
    view.storedTruncated = true;
    view.storedMeta = stored.storedMeta;
  }
  if (stored.redaction) view.redaction = stored.redaction;
  if (stored.passthroughReason) view.passthroughReason = stored.passthroughReason;
  if (stored.status === "error" || stored.result === undefined) {
    if (steps) view.pathMatched = false;
    return view;
  }
  const isMcp = stored.serviceType === "mcp_server";
  let selected: Json = stored.result;
  if (steps) {
    const found = isMcp ? selectInMcpEnvelope(stored.result, steps) : selectPath(stored.result, steps);
    view.pathMatched = found.matched;
    selected = found.value;
  }
  const capped = capResponse(selected, clampReadChars(maxChars), selected);
  view.result = capped.value;
  view.truncated = capped.truncated;
  view.responseMeta = capped.meta;
  view.cursor = capped.cursor ?? findCursor(isMcp ? unwrapMcpEnvelope(stored.result) : stored.result);
  if (capped.note) view.truncationNote = capped.note;
  return view;
}
