/**
 * Execution tools: run tools (`batch_execute_tools`, one to ten calls) and read a stored result back
 * (`fetch_result`). Each batch element is given the spec's MCP result fields ("Result fields on the MCP
 * surface"): the gateway's element already carries the unwrapped result, redaction report and
 * truncation note; here they are arranged as the MCP surface names them (batch-elements.ts), nothing
 * recomputed. A client that declares the Tasks extension gets every new batch as a task (tasks.ts): the
 * batch is sent with `Prefer: respond-async` and runs in the execution service, and tasks/get answers
 * the result this tool would have answered. Synchronous still: a consent round's retry (request state),
 * and every batch of a client that also declared form elicitation (consent.ts asks its person, which a
 * task cannot do yet).
 * Consent and an upstream tool's questions are put to the person where the client can ask (consent.ts).
 */
import type { CallToolResult, InputRequiredResult } from "@modelcontextprotocol/server";
import type { BatchElement } from "@toolport/client";
import { z } from "zod";
import type { CallerHeaders, GatewayReply } from "../gateway-client.js";
import { mcpElement } from "./batch-elements.js";
import {
  answerOf,
  argumentsHash,
  askPerson,
  askUpstream,
  type ConsentState,
  callerElement,
  canAskPerson,
  type Element,
  type InputResponses,
  notRun,
  type PersonAnswer,
  type ToolFacts,
  upstreamAnswers,
  upstreamAsk,
} from "./consent.js";
import {
  asObject,
  call,
  callerOf,
  failure,
  fromReply,
  type HandlerExtra,
  requireKey,
  success,
  type ToolContext,
  unreachable,
} from "./results.js";
import { type BatchJson, canUseTasks, TASK_MARKER, taskOfBatch } from "./tasks.js";

/** A cap on a result's size, as the gateway takes it (1 to 500000 characters). */
export const maxResponseChars = (description: string) => z.number().int().min(1).max(500_000).optional().describe(description);

const callInput = z.object({
  tool_id: z.string().min(1).describe("Id (or slug) of the tool to run, from search_tools."),
  tool_input: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("The tool's parameters as an object, keyed by the parameter names search_tools listed. Default {}."),
  fields: z
    .array(z.string())
    .optional()
    .describe(
      "Paths to keep in the result, e.g. ['matches[].id', 'total']; applied before the size cap. The full result stays stored under the execution_id.",
    ),
  max_response_chars: maxResponseChars(
    "Cap on the result's JSON size in characters (default 32000, at most 500000); whole array entries are dropped from the tail.",
  ),
  confirm_token: z
    .string()
    .optional()
    .describe(
      "The confirm_token from an earlier element's consent object: runs the call the user agreed to, with the same tool_input.",
    ),
});

const batchInput = {
  calls: z
    .array(callInput)
    .min(1)
    .max(10)
    .describe("One to ten tool calls; they run concurrently and independently, and results come back in the same order."),
};

const element = z.looseObject({
  tool_id: z.string(),
  success: z.boolean(),
  result: z
    .unknown()
    .describe("The payload (for MCP-served tools the envelope is unwrapped); null when the call failed or was refused."),
  truncated: z.boolean(),
  cursor: z.string().nullable().describe("The upstream's pagination cursor, when the payload carries one."),
  error: z.string().nullable(),
  _meta: z.looseObject({
    execution_id: z.string().nullable().describe("Handle for fetch_result; null when the call was refused before it ran."),
  }),
});

const batchOutput = { results: z.array(element).describe("One element per call, in input order.") };

const fetchInput = {
  execution_id: z.string().describe("The execution_id (from an element's _meta.execution_id) of a call you made."),
  path: z
    .string()
    .optional()
    .describe(
      "Part of the result to return: 'a.b' nested keys, 'items[].name' every element, 'items[0]' one element, '*' every key; a key with dots in backticks.",
    ),
  max_chars: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Cap on the returned JSON in characters (default 50000, clamped to 100..2000000)."),
};

const fetchOutput = {
  execution_id: z.string(),
  tool_id: z.string(),
  status: z.string().describe("`success` or `error`."),
  result: z.unknown(),
  truncated: z.boolean(),
  error: z.string().nullable(),
};

type Call = z.infer<typeof callInput>;
/** A call as the gateway takes it: a caller's call, perhaps with answers to its tool's questions. */
export type GatewayCall = Call & { input_responses?: InputResponses };

/** How many times one call's upstream tool may ask in a row before answerUpstream stops asking. */
export const MAX_UPSTREAM_ROUNDS = 5;

/** POST /v1/tools/call/batch: the elements in the MCP surface's fields, or the failure to answer. */
export async function runBatch(
  ctx: ToolContext,
  caller: CallerHeaders,
  calls: GatewayCall[],
): Promise<Element[] | CallToolResult> {
  let reply: GatewayReply;
  try {
    reply = await ctx.gateway.send(caller, (api, headers) => api.POST("/v1/tools/call/batch", { body: { calls }, headers }));
  } catch (err) {
    return unreachable(err as Error);
  }
  if (reply.status < 200 || reply.status >= 300) return fromReply(reply, asObject);
  return ((asObject(reply.body).results ?? []) as BatchElement[]).map(mcpElement);
}

/**
 * The batch as a task: sent with `Prefer: respond-async`, answered with the task (http.ts turns it into
 * the tools/call answer). A refusal of the whole batch (400, 401) is the synchronous call's result.
 */
async function startBatchTask(ctx: ToolContext, caller: CallerHeaders, calls: Call[]): Promise<CallToolResult> {
  let reply: GatewayReply;
  try {
    reply = await ctx.gateway.send(caller, (api, headers) =>
      api.POST("/v1/tools/call/batch", { body: { calls }, headers: { ...headers, Prefer: "respond-async" } }),
    );
  } catch (err) {
    return unreachable(err as Error);
  }
  const batch = asObject(reply.body) as BatchJson;
  if (reply.status !== 202 || typeof batch.batch_id !== "string") return fromReply(reply, asObject);
  // The batch exists in the execution service now, so tasks/get on this handle resolves.
  const { result: _, ...task } = taskOfBatch(ctx.tasks!.seal(batch.batch_id, caller, "bt1"), batch);
  // The SDK checks structuredContent against the output schema before http.ts replaces this whole
  // result with the task: an empty `results` satisfies it and is never sent.
  return { ...success({ results: [] }), _meta: { [TASK_MARKER]: task } };
}

/** The price of each tool that waits for consent, for the question (GET /v1/tools/{id}). */
async function toolFacts(ctx: ToolContext, caller: CallerHeaders, elements: Element[]): Promise<Map<string, ToolFacts>> {
  const ids = [...new Set(elements.filter((e) => e.consent).map((e) => e.tool_id as string))];
  const facts = new Map<string, ToolFacts>();
  await Promise.all(
    ids.map(async (id) => {
      try {
        const reply = await ctx.gateway.send(caller, (api, headers) =>
          api.GET("/v1/tools/{tool_id}", { params: { path: { tool_id: id } }, headers }),
        );
        const tool = asObject(reply.body) as { price_per_call_cents?: unknown };
        if (reply.status === 200 && typeof tool.price_per_call_cents === "number") {
          facts.set(id, { priceCents: tool.price_per_call_cents });
        }
      } catch {
        // The question then says the price is unknown; the call itself is unchanged.
      }
    }),
  );
  return facts;
}

/**
 * One call whose upstream tool asked the person (`element`, from runBatch): asks the questions with
 * `ask` and repeats the call with the answers, again while the tool asks (at most MAX_UPSTREAM_ROUNDS
 * rounds). For clients that are asked by requests of their own, such as a 2025-11-25 client's
 * `ctx.mcpReq.elicitInput({mode: "form", message, requestedSchema})`. The element returned is as the
 * caller gets it (callerElement); an element whose tool did not ask comes back unchanged.
 */
export async function answerUpstream(
  ctx: ToolContext,
  caller: CallerHeaders,
  call: Call,
  element: Element,
  ask: (request: { mode: "form"; message: string; requestedSchema: Record<string, unknown> }) => Promise<PersonAnswer>,
): Promise<Element | CallToolResult> {
  let current = element;
  for (let round = 0; round < MAX_UPSTREAM_ROUNDS; round++) {
    const asked = upstreamAsk(current);
    if (!asked) break;
    const input_responses = await askUpstream(call.tool_id, asked, ask);
    const ran = await runBatch(ctx, caller, [{ ...call, confirm_token: undefined, input_responses }]);
    if (!Array.isArray(ran)) return ran;
    current = ran[0] ?? current;
  }
  return callerElement(current);
}

/**
 * The retried round: the state is verified already (MAC, expiry, caller, tool); it must be for these
 * arguments. Calls the person accepted run with their confirm tokens, and calls whose upstream tool
 * asked are repeated with the person's answers, in one batch; the others answer why they did not run.
 * A call that asks again (its tool, or consent after an answer) makes another round. Elements come
 * back in input order.
 */
async function finishConsent(
  ctx: ToolContext,
  caller: CallerHeaders,
  args: { calls: Call[] },
  extra: HandlerExtra,
  state: ConsentState,
): Promise<CallToolResult | InputRequiredResult> {
  if (state.args !== argumentsHash(args)) {
    return failure(
      "consent_state_mismatch: the answers came back for other arguments than the ones asked about. Nothing ran; call batch_execute_tools again.",
    );
  }
  const results = [...state.done];
  const accepted: { index: number; token: string }[] = [];
  for (const { index, token } of state.pending) {
    const call = args.calls[index];
    if (!call) continue;
    const answer = answerOf(extra, index);
    if (answer === "run") accepted.push({ index, token });
    else results[index] = notRun(call.tool_id, answer);
  }
  const answered = (state.upstream ?? [])
    .filter(({ index }) => args.calls[index] !== undefined)
    .map((entry) => ({ index: entry.index, input_responses: upstreamAnswers(extra, entry) }));
  if (accepted.length > 0 || answered.length > 0) {
    const calls: GatewayCall[] = [
      ...accepted.map(({ index, token }) => ({ ...(args.calls[index] as Call), confirm_token: token })),
      // The continuation stands for the consent the first call passed: no confirm token again.
      ...answered.map(({ index, input_responses }) => ({
        ...(args.calls[index] as Call),
        confirm_token: undefined,
        input_responses,
      })),
    ];
    const ran = await runBatch(ctx, caller, calls);
    if (!Array.isArray(ran)) return ran;
    answered.forEach(({ index }, i) => {
      results[index] = ran[accepted.length + i] ?? null;
    });
    accepted.forEach(({ index }, i) => {
      const element = ran[i];
      if (!element?.consent) results[index] = element ?? null;
      else {
        // The services refused the token (a replayed state: it ran already). No new token goes to the model.
        const { consent: _, ...refused } = element;
        results[index] = {
          ...refused,
          error:
            "this answer was used already (an answer runs its call once); nothing ran. Call batch_execute_tools again to be asked again",
        };
      }
    });
  }
  const elements = results.map((e) => e ?? null);
  if (ctx.consent && canAskPerson(extra) && elements.every((e) => e !== null) && needsAsking(elements as Element[])) {
    const facts = await toolFacts(ctx, caller, elements as Element[]);
    return askPerson(ctx.consent, extra, args, elements as Element[], (id) => facts.get(id) ?? {});
  }
  return success({ results: elements.map((e) => (e ? callerElement(e) : e)) });
}

/** Whether a round's elements hold a question for the person (consent, or an upstream tool's). */
function needsAsking(elements: Element[]): boolean {
  return elements.some((e) => e.consent !== undefined || upstreamAsk(e) !== undefined);
}

export function registerExecutionTools(ctx: ToolContext): void {
  ctx.server.registerTool(
    "batch_execute_tools",
    {
      title: "Run tools",
      description:
        "Run one to ten catalog tools in one request (find ids and parameters with search_tools first). Each call runs independently; one failing does not affect the others. " +
        "Each result has success, result (capped to max_response_chars; truncated says so and _meta.truncation_note says what was dropped), cursor when the upstream pages, error, " +
        "and _meta.execution_id to read the full stored result with fetch_result. Credential values an upstream returns are masked as [REDACTED:...] (_meta.redaction). " +
        "If an element has a consent object, nothing ran: ask the user, then send the same call with its confirm_token (a client that can ask its user is asked directly instead, and the call runs only if the user agrees). " +
        "An error_code of mcp_input_required means the tool needs a person's answer to finish: a client that can ask its user (elicitation) is asked the tool's question directly, and the call goes on with the answer. " +
        "An error_code of insufficient_balance means fund_agent_wallet; tool_not_permitted means this key may not call that tool. " +
        "Clients that support the MCP Tasks extension get a task handle at once and poll it.",
      inputSchema: z.object(batchInput),
      outputSchema: z.looseObject(batchOutput),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async (args, extra) => {
      const caller = callerOf(extra);
      const missing = requireKey(caller);
      if (missing) return missing;
      const state = extra.mcpReq?.requestState?.<ConsentState>();
      if (state !== undefined) return finishConsent(ctx, caller, args, extra, state);
      // A client that can ask its person stays synchronous: a task cannot carry consent questions yet
      // (tasks/update with input is later work), and its answer would hand the confirm tokens to the model.
      const asksPerson = ctx.consent !== undefined && canAskPerson(extra);
      if (ctx.tasks !== undefined && canUseTasks(extra) && !asksPerson) return startBatchTask(ctx, caller, args.calls);
      const ran = await runBatch(ctx, caller, args.calls);
      if (!Array.isArray(ran)) return ran;
      if (ctx.consent && needsAsking(ran) && canAskPerson(extra, ctx.server.server.getClientCapabilities())) {
        const facts = await toolFacts(ctx, caller, ran);
        return askPerson(ctx.consent, extra, args, ran, (id) => facts.get(id) ?? {});
      }
      return success({ results: ran.map(callerElement) });
    },
  );

  ctx.server.registerTool(
    "fetch_result",
    {
      title: "Read a stored result",
      description:
        "Read back the stored result of one of your earlier calls by its execution_id, whole or the part at a path, capped to max_chars. " +
        "Use it when a batch result was truncated or projected, or to drill into a large result (e.g. path 'items[].id'). " +
        "Returns status, result, truncated, response_meta (what the cap dropped) and path_matched when a path was given.",
      inputSchema: z.object(fetchInput),
      outputSchema: z.looseObject(fetchOutput),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      const caller = callerOf(extra);
      const missing = requireKey(caller);
      if (missing) return missing;
      return call(
        ctx,
        caller,
        (api, headers) =>
          api.GET("/v1/tools/executions/{execution_id}/result", {
            params: { path: { execution_id: args.execution_id }, query: { path: args.path, max_chars: args.max_chars } },
            headers,
          }),
        asObject,
      );
    },
  );
}
