/** The execution routes' operations (gateway/src/routes/execution.ts) and the schemas only they use. */
import { MAX_BATCH_CALLS } from "../../http/input.js";
import type { OperationDoc } from "../describe.js";
import { arrayOf, batchRecord, closed, consent, integer, oneOf, ref, type Schema, string, stringArray } from "../schemas.js";

const toolInput: Schema = {
  type: "object",
  description: "The tool's parameters by name, checked against the tool's input schema (400 `invalid_parameters`).",
};
const fields: Schema = {
  ...stringArray,
  description:
    "Dotted paths to keep in the result (`matches[].id`, `items[0].name`, `*`), applied before the size cap; the " +
    "element reports them in `projection`. The full result stays stored under the execution_id.",
};
const maxResponseChars: Schema = {
  type: "integer",
  minimum: 1,
  default: 32000,
  description: "Cap of the returned result in characters: default 32000, clamped to 100..500000 (below 1 is a 400).",
};
const confirmToken: Schema = {
  ...string,
  description:
    "The `confirm_token` of a 409 `confirmation_required` (or an element's `consent`): runs the call it was issued for.",
};
const inputResponses: Schema = {
  type: "object",
  description:
    "Answers to the questions of an MCP tool that failed with `error_code` `mcp_input_required`: the same call " +
    "(same tool and tool_input) repeated with the `continuation` of its `error_details` and one answer per question " +
    "key. `accept` carries `content` (an object matching the question's `requested_schema`); `decline` and " +
    "`cancel` carry none. A continuation that is altered, expired, used already, or for another caller, tool or " +
    "tool_input is a 400 `invalid_input_responses`, and nothing runs.",
  required: ["continuation", "answers"],
  properties: {
    continuation: { ...string, description: "`error_details.continuation` of the failed call." },
    answers: {
      type: "object",
      description: "One answer per question key.",
      additionalProperties: {
        type: "object",
        required: ["action"],
        properties: {
          action: { ...oneOf("accept", "decline", "cancel"), description: "The person's choice." },
          content: { type: "object", description: "The answer (with accept), matching `requested_schema`." },
        },
      },
    },
  },
};
const idempotencyKey: Schema = {
  type: "string",
  minLength: 1,
  maxLength: 255,
  description:
    "A repeat with the same key and input answers the first call's outcome instead of running again; the same " +
    "key with other input is a 422 `idempotency_key_reused`.",
};

/** The 409 of a single call: the error body, with the token and the consent object at the top level. */
const confirmationRequired = closed({
  detail: string,
  error: closed({
    code: { const: "confirmation_required" },
    message: string,
    details: {
      type: "object",
      required: ["tool_id", "consent", "confirm_token"],
      properties: {
        tool_id: string,
        consent: ref("Consent"),
        confirm_token: string,
        token_problem: {
          ...oneOf("invalid", "expired", "other_key", "other_tool", "parameters_changed", "used"),
          description: "Why a confirm_token that was sent did not run the call (a fresh token is issued).",
        },
      },
    },
  }),
  confirm_token: { ...string, description: "Repeat the same call with this token to run it (single use, 10 minutes)." },
  consent: ref("Consent"),
});

export const executionSchemas: Record<string, Schema> = {
  Consent: {
    description:
      "A call that writes, sends, spends or deletes, made with a key that requires confirmation, was not run: the " +
      "tool, the exact parameters, and the token that runs exactly this call (single use, until `expires_at`).",
    ...consent,
  },
  ConfirmationRequired: {
    description:
      "409 `confirmation_required`: the error body (`detail`, `error`), plus `confirm_token` and `consent` at the " +
      "top level, where a client looks first.",
    ...confirmationRequired,
  },
  BatchResults: {
    description: "One element per call, in input order.",
    ...closed({ results: arrayOf(ref("BatchElement")) }),
  },
  BatchRecord: {
    description:
      "An async batch (`Prefer: respond-async`): its status (`working`, then `completed`; `cancelled` after a cancel; " +
      "`failed` when the caller's key was refused as a whole), how many calls have their element, and once it ended " +
      "`results`, exactly the synchronous route's `results` (each call's execution_id its own). A call cut off by a " +
      "restart of the execution service is never run again: its element fails with `error_code` `batch_interrupted`; " +
      "a call a cancel stopped before it started has `batch_cancelled`. Kept 24 hours after it ended (configurable).",
    ...batchRecord,
  },
  BatchCall: {
    description: "One call of a batch, with the options of a single call (other keys are ignored).",
    type: "object",
    required: ["tool_id"],
    properties: {
      tool_id: { ...string, minLength: 1, description: "The tool's id or slug." },
      tool_input: { ...toolInput, default: {} },
      fields,
      max_response_chars: maxResponseChars,
      confirm_token: confirmToken,
      idempotency_key: idempotencyKey,
      input_responses: inputResponses,
    },
  },
};

const errorResponse = (description: string) => ({ description, schema: ref("Error") });

export const executionOps = {
  callBatch: {
    operationId: "callToolsBatch",
    summary: `Call up to ${MAX_BATCH_CALLS} tools`,
    description:
      "Each call runs independently and concurrently; `results` holds one element per call, in input order. Refusals " +
      "stay inside their element (`success` false, `error`, `error_code`, and `execution_id` null): tool not found, " +
      "not permitted, invalid input, a consent request (`consent`, see the 409 of a single call), a limit " +
      "(`insufficient_balance`, `spend_limit_exceeded`, `rate_limited`, `usage_limit_reached`). A call that ran and " +
      "failed upstream has its `execution_id` (with `error_code` `mcp_input_required` and `error_details` when its MCP " +
      "tool asked a person a question: repeat that call with `input_responses`). Only a malformed batch (400) or the caller's key being refused (401, " +
      "e.g. revoked) fails the whole request. With `Prefer: respond-async` the batch is recorded and runs in the " +
      "background: 202 with its record at once, `Location` to follow it (GET /v1/tools/call/batch/{batch_id}).",
    tags: ["Execution"],
    headers: {
      Prefer: {
        description:
          "`respond-async` (RFC 7240): answer 202 with the batch record at once instead of waiting for every call. " +
          "Other preferences are ignored.",
        schema: string,
        example: "respond-async",
      },
    },
    body: {
      schema: {
        type: "object",
        required: ["calls"],
        properties: { calls: { type: "array", items: ref("BatchCall"), minItems: 1, maxItems: MAX_BATCH_CALLS } },
      },
      example: {
        calls: [
          { tool_id: "<tool id>", tool_input: { query: "weather in Paris" } },
          { tool_id: "<tool id>", tool_input: { q: "news" }, fields: ["matches[].id"], max_response_chars: 4000 },
        ],
      },
    },
    responses: {
      200: {
        description: "One element per call, in input order.",
        schema: ref("BatchResults"),
        example: {
          results: [
            {
              tool_id: "7c0e9f8a-2b1d-4c3e-9a5f-1d2e3f4a5b6c",
              success: true,
              result: { temperature_c: 18 },
              error: null,
              execution_id: "0b6f3c52-8f3e-4a8e-b4a7-2f1d6a9c0e11",
              truncated: false,
            },
          ],
        },
      },
      202: {
        description: "`Prefer: respond-async`: the batch is recorded and runs; follow it at `Location`.",
        schema: ref("BatchRecord"),
        headers: {
          Location: { description: "Where the batch is read: /v1/tools/call/batch/{batch_id}.", schema: string },
          "Preference-Applied": { description: "`respond-async`.", schema: { type: "string", const: "respond-async" } },
        },
        example: {
          batch_id: "5a0f7d3e-9c41-4b2a-8e6f-1d3c5b7a9e20",
          status: "working",
          created_at: "2026-11-20T09:30:00.000Z",
          finished_at: null,
          calls_total: 2,
          calls_done: 0,
          results: null,
        },
      },
    },
  },
  getBatch: {
    operationId: "getToolsBatch",
    summary: "Read an async batch",
    description:
      "The record of a batch sent with `Prefer: respond-async`: `working` with `calls_done` of `calls_total` and " +
      "`results` null, then `completed` (or `cancelled`) with `results` as the synchronous route answers them. Only " +
      "the API key that sent the batch sees it: any other caller, an unknown id or a batch pruned after its " +
      "retention is a 404 `batch_not_found`; an id that is not a UUID is a 400 `invalid_batch_id`.",
    tags: ["Execution"],
    path: { batch_id: { description: "The `batch_id` the 202 answered.", schema: string } },
    responses: {
      200: {
        description: "The batch record.",
        schema: ref("BatchRecord"),
        example: {
          batch_id: "5a0f7d3e-9c41-4b2a-8e6f-1d3c5b7a9e20",
          status: "completed",
          created_at: "2026-11-20T09:30:00.000Z",
          finished_at: "2026-11-20T09:30:02.412Z",
          calls_total: 1,
          calls_done: 1,
          results: [
            {
              tool_id: "7c0e9f8a-2b1d-4c3e-9a5f-1d2e3f4a5b6c",
              success: true,
              result: { temperature_c: 18 },
              error: null,
              execution_id: "0b6f3c52-8f3e-4a8e-b4a7-2f1d6a9c0e11",
              truncated: false,
            },
          ],
        },
      },
      404: errorResponse("`batch_not_found`: no batch with this id was sent with this key."),
    },
  },
  cancelBatch: {
    operationId: "cancelToolsBatch",
    summary: "Cancel an async batch",
    description:
      "Calls of the batch that have not started do not run (their elements fail with `error_code` " +
      "`batch_cancelled`); calls already running finish and keep their outcome. The batch then reads `cancelled`. " +
      "A batch that ended already is answered unchanged. Same visibility as reading it (404, 400).",
    tags: ["Execution"],
    path: { batch_id: { description: "The `batch_id` the 202 answered.", schema: string } },
    responses: {
      200: {
        description: "The batch record after the cancel.",
        schema: ref("BatchRecord"),
        example: {
          batch_id: "5a0f7d3e-9c41-4b2a-8e6f-1d3c5b7a9e20",
          status: "cancelled",
          created_at: "2026-11-20T09:30:00.000Z",
          finished_at: "2026-11-20T09:30:00.518Z",
          calls_total: 1,
          calls_done: 1,
          results: [
            {
              tool_id: "7c0e9f8a-2b1d-4c3e-9a5f-1d2e3f4a5b6c",
              success: false,
              result: null,
              error: "the batch was cancelled before this call started; it did not run",
              error_code: "batch_cancelled",
              execution_id: null,
              truncated: false,
            },
          ],
        },
      },
      404: errorResponse("`batch_not_found`: no batch with this id was sent with this key."),
    },
  },
  callTool: {
    operationId: "callTool",
    summary: "Call a tool",
    description:
      "Runs one tool with `tool_input` (or the parameters at the root of the body) and answers a batch element plus " +
      "`truncated` and `response_meta`. A call that ran but failed upstream is still a 200 with `success` false and " +
      "its `execution_id` (the stored handle reads `status: error`); an MCP tool that asks a person a question " +
      "fails so with `error_code` `mcp_input_required` and `error_details` (the questions and a continuation): " +
      "repeat the call with `input_responses` to answer. Refusals are errors: 400 invalid input (`misplaced_tool_input` " +
      "when the parameters sit under `input`, `params` or `arguments` instead of `tool_input` and the tool has no " +
      "parameter of that name), 402 wallet " +
      "too low for a priced tool, 403 tool not permitted to the key or a spending cap reached, 404 unknown or sunset " +
      "tool, 409 consent needed, 412/422 Idempotency-Key in flight or reused, 429 rate or usage limit.",
    tags: ["Execution"],
    path: { tool_id: { description: "The tool's id, or its slug.", schema: string } },
    headers: {
      "Idempotency-Key": {
        description: `${idempotencyKey.description} Takes precedence over the body's \`idempotency_key\`.`,
        schema: { type: "string", minLength: 1, maxLength: 255 },
      },
    },
    body: {
      required: false,
      description:
        "The call's options; every other key at the root is taken as a tool parameter when `tool_input` is absent " +
        "(`input`, `params` or `arguments` only when the tool declares a parameter of that name: otherwise 400 `misplaced_tool_input`).",
      schema: {
        type: "object",
        properties: {
          tool_input: toolInput,
          fields,
          max_response_chars: maxResponseChars,
          confirm_token: confirmToken,
          idempotency_key: { ...idempotencyKey, description: "As the `Idempotency-Key` header (which wins)." },
          input_responses: inputResponses,
        },
        additionalProperties: { description: "A tool parameter (only when `tool_input` is absent)." },
      },
      example: { tool_input: { query: "weather in Paris" }, fields: ["current.temperature_c"], max_response_chars: 8000 },
    },
    responses: {
      200: {
        description: "The call ran (successfully or not): the element, its handle, and truncation facts.",
        schema: ref("SingleCallResult"),
        headers: {
          "Idempotent-Replayed": {
            description: "`true` when this answer replays an earlier call with the same Idempotency-Key.",
            schema: { type: "string", const: "true" },
          },
        },
        example: {
          tool_id: "7c0e9f8a-2b1d-4c3e-9a5f-1d2e3f4a5b6c",
          success: true,
          result: { current: { temperature_c: 18 } },
          error: null,
          execution_id: "0b6f3c52-8f3e-4a8e-b4a7-2f1d6a9c0e11",
          projection: { kept: ["current.temperature_c"], unmatched: [] },
          truncated: false,
          response_meta: null,
        },
      },
      402: errorResponse(
        "`insufficient_balance`: the wallet's available balance is below the tool's price (`details`: price_atomic, " +
          "price_usdc, available_atomic, balance_usdc). Nothing ran.",
      ),
      403: errorResponse(
        "`tool_not_permitted` (the key's allowed_services / allowed_tools exclude it), `spend_limit_exceeded` (a per-call " +
          "or daily cap of the key or the account, or the per-call ceiling; `details.limit` names it), or the " +
          "credentials do not allow this.",
      ),
      404: errorResponse("`tool_not_found`: no such tool, not visible to the caller, inactive, or past its sunset date."),
      409: {
        description:
          "`confirmation_required`: the tool writes, sends, spends or deletes and the key requires confirmation. Nothing " +
          "ran; repeat the same call (same parameters) with `confirm_token`.",
        schema: ref("ConfirmationRequired"),
      },
      412: {
        description: "`idempotency_key_in_flight`: a call with this Idempotency-Key is still running; retry.",
        schema: ref("Error"),
        headers: { "Retry-After": { description: "Seconds to wait before trying again.", schema: integer } },
      },
      422: errorResponse("`idempotency_key_reused`: this Idempotency-Key was already used with different input."),
      429: {
        description:
          "`rate_limited` (tool calls per minute; with Retry-After) or `usage_limit_reached` (the free tier's monthly " +
          "calls). `detail` is the usage object `{message, usage, upgrade_url}`: usage holds `limit`, `remaining`, " +
          "`window_seconds`, `resets_at` for the rate limit, `calls_this_month`, `limit`, `resets_at` for the free tier.",
        schema: ref("Error"),
        headers: { "Retry-After": { description: "Seconds until the rate-limit window allows a call.", schema: integer } },
        example: {
          detail: {
            message: "free tier usage limit of 5000 calls this month reached",
            usage: { calls_this_month: 5000, limit: 5000, resets_at: "2025-07-01T00:00:00.000Z" },
            upgrade_url: "https://toolport.example/pricing",
          },
          error: {
            code: "usage_limit_reached",
            message: "free tier usage limit of 5000 calls this month reached",
            details: { calls_this_month: 5000, limit: 5000, resets_at: "2025-07-01T00:00:00.000Z" },
          },
        },
      },
    },
  },
  getExecutionResult: {
    operationId: "getExecutionResult",
    summary: "Read a stored result by handle",
    description:
      "The stored result of an execution the caller ran (any other handle, or one that is not a UUID, is a 404), whole " +
      "or the subtree at `path`, capped at `max_chars` with JSON kept valid. Path syntax: `a.b.c` nested keys, " +
      "`items[].name` every element, `items[0].name` one element, `*` every key or element at that level, a key " +
      "holding dots in backticks; a path continuing into a string that holds JSON is resolved inside it, and a " +
      "`<json>` segment (from a redaction report) is skipped. For an MCP-served tool, the path is tried against the " +
      "JSON inside its text block first, then the envelope. A failed execution reads `status` `error`, its `error`, " +
      "and a null `result`.",
    tags: ["Execution"],
    path: { execution_id: { description: "The `execution_id` a call answered.", schema: string } },
    query: {
      path: {
        description:
          "Return only the subtree at this path (`path_matched` says whether anything matched). An empty or blank " +
          "path is no path: the whole result, `path` null.",
        schema: string,
      },
      max_chars: {
        description: "Cap of the returned result in characters: default 50000, clamped to 100..2000000 (not refused).",
        schema: { type: "integer", default: 50000 },
      },
    },
    responses: {
      200: {
        description: "The stored result (or its subtree), capped.",
        schema: ref("ExecutionResult"),
        example: {
          execution_id: "0b6f3c52-8f3e-4a8e-b4a7-2f1d6a9c0e11",
          tool_id: "7c0e9f8a-2b1d-4c3e-9a5f-1d2e3f4a5b6c",
          status: "success",
          executed_at: "2025-06-01T12:00:00.000Z",
          error: null,
          path: "current.temperature_c",
          result: 18,
          truncated: false,
          response_meta: null,
          path_matched: true,
        },
      },
    },
  },
} satisfies Record<string, OperationDoc>;
