/** The call log's operation (gateway/src/routes/activity.ts) and its schemas. */
import type { OperationDoc } from "../describe.js";
import { arrayOf, closed, integer, oneOf, ref, type Schema, string, stringOrNull, timestamp } from "../schemas.js";

const idAndName = closed({ id: string, name: string });

export const activitySchemas: Record<string, Schema> = {
  ActivityCall: {
    description:
      "One call in the log: a tool call that ran (`success`, `error`) or was refused before running (`refused`, with " +
      "its reason code).",
    ...closed({
      id: { ...string, description: "The execution's id; for a refused call, its refusal record's id (opens no result)." },
      at: { ...timestamp, description: "When the call was made." },
      status: oneOf("success", "error", "refused"),
      reason: {
        ...stringOrNull,
        description:
          "`refused`: the reason code (`tool_not_permitted`, `confirmation_required`, `rate_limited`, " +
          "`usage_limit_reached`, `insufficient_balance`, `spend_limit_exceeded`); `error`: the error type (e.g. " +
          "`http_500`, `timeout`); null on success.",
      },
      error_class: {
        type: ["string", "null"],
        enum: ["auth", "caller", "upstream", "platform", null],
        description: "Who a failed execution's error belongs to; null otherwise.",
      },
      message: { ...stringOrNull, description: "The refusal's or the failure's message (secrets masked); null on success." },
      account_id: { ...string, description: "The account that made the call." },
      key: {
        anyOf: [
          closed({ id: string, name: { ...stringOrNull, description: "Null when the reader may not list that key." } }),
          { type: "null" },
        ],
        description: "The API key used; null for a signed-in (JWT) call.",
      },
      tool: idAndName,
      service: idAndName,
      duration_ms: { ...integer, minimum: 0, description: "How long the call ran (0 for a refused call)." },
      cost_cents: { ...integer, minimum: 0, description: "What the call cost, in cents (USD)." },
      execution_id: {
        ...stringOrNull,
        description: "The handle of the stored result (GET /v1/tools/executions/{execution_id}/result); null when refused.",
      },
      result_url: {
        ...stringOrNull,
        description:
          "Where the reader opens the stored result: set for calls that ran and that the reader made (a result is " +
          "readable by its caller only); null otherwise.",
      },
    }),
  },
  ActivityPage: {
    description: "A page of the call log, newest first.",
    ...closed({
      calls: arrayOf(ref("ActivityCall")),
      next_cursor: { ...stringOrNull, description: "Pass as `cursor` for the next page; null on the last page." },
    }),
  },
};

const T = "2026-03-01T12:00:00.000Z";

export const activityOps = {
  listActivity: {
    operationId: "listActivity",
    summary: "The call log",
    description:
      "Tool calls newest first, a page at a time: who called what, when, its status, duration and cost, and a link " +
      "to the stored result. Refused calls (key permission, consent required, rate or free-tier limit, insufficient " +
      "balance, spend cap) are listed with status `refused` and their reason. What a caller sees: with an API key, " +
      "that key's own calls; signed in as an owner or admin of the organization (`svc-org-id`), the organization's " +
      "calls; signed in otherwise, the caller's own calls in the organization. Filters combine. 400 `invalid_cursor`, " +
      "`invalid_status`, `invalid_time_range`, `invalid_request` (a bad timestamp or limit).",
    tags: ["Execution"],
    query: {
      tool_id: { description: "Only calls of this tool (its id).", schema: { type: "string" } },
      key_id: { description: "Only calls made with this API key (its id).", schema: { type: "string" } },
      status: { description: "Only calls with this outcome.", schema: oneOf("success", "error", "refused") },
      since: { description: "Only calls at or after this instant (ISO 8601).", schema: { type: "string", format: "date-time" } },
      until: { description: "Only calls before this instant (ISO 8601).", schema: { type: "string", format: "date-time" } },
      limit: {
        description: "Page size: default 50, clamped to 1..200.",
        schema: { type: "integer", default: 50, minimum: 1, maximum: 200 },
      },
      cursor: {
        description: "The previous page's `next_cursor` (400 `invalid_cursor` for anything else).",
        schema: { type: "string" },
      },
    },
    responses: {
      200: {
        description: "The page.",
        schema: ref("ActivityPage"),
        headers: {
          Link: {
            description: 'The next page, as `<url>; rel="next"` (RFC 8288), same filters and limit; absent on the last page.',
            schema: { type: "string" },
          },
        },
        example: {
          calls: [
            {
              id: "5d0c6a1e-2b3f-4c5d-8e9f-0a1b2c3d4e5f",
              at: T,
              status: "refused",
              reason: "tool_not_permitted",
              error_class: null,
              message: "this API key is not permitted to call get_pet",
              account_id: "acct_1",
              key: { id: "key_1", name: "ci agent" },
              tool: { id: "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10", name: "get_pet" },
              service: { id: "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b", name: "Petstore" },
              duration_ms: 0,
              cost_cents: 0,
              execution_id: null,
              result_url: null,
            },
            {
              id: "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d",
              at: "2026-03-01T11:59:58.000Z",
              status: "success",
              reason: null,
              error_class: null,
              message: null,
              account_id: "acct_1",
              key: { id: "key_1", name: "ci agent" },
              tool: { id: "7f0c2f44-3b7e-4c52-9b1e-0c6a3c1d2e10", name: "get_pet" },
              service: { id: "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b", name: "Petstore" },
              duration_ms: 184,
              cost_cents: 1,
              execution_id: "9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d",
              result_url: "/v1/tools/executions/9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d/result",
            },
          ],
          next_cursor: null,
        },
      },
    },
  },
} satisfies Record<string, OperationDoc>;
