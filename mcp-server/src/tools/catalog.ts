/** Catalog tools: find tools (`search_tools`) and what to use next (`get_recommendations`). */
import { z } from "zod";
import { compactTool } from "./compact.js";
import { call, callerOf, listUnder, type ToolContext } from "./results.js";

const searchInput = {
  query: z
    .string()
    .describe(
      "What you want to do, in plain words (e.g. 'convert currency', 'list files in a folder'). Matched by meaning against tool names and descriptions; an empty query returns nothing.",
    ),
  limit: z.number().int().min(1).optional().describe("How many tools to return (default 20); never more than 30 come back."),
  service_id: z.string().optional().describe("Only tools of this service (its id from an earlier result)."),
  ready_only: z
    .boolean()
    .optional()
    .describe("true: only tools you can call right now with your key (no credential or funding missing). Default false."),
  detail: z
    .enum(["compact", "full"])
    .optional()
    .describe(
      "compact (default): what you need to choose and call each tool, once. full: the catalog's whole tool record (every parameter's JSON Schema and location, the full reliability block).",
    ),
};

const searchOutput = {
  tools: z
    .array(
      z.looseObject({
        id: z.string(),
        name: z.string(),
        description: z.string(),
        readiness: z.string(),
        parameters: z.record(z.string(), z.unknown()),
      }),
    )
    .describe("Matching tools, best first; ready ones first for a signed-in caller."),
};

const recommendationsInput = {
  tool_id: z
    .string()
    .optional()
    .describe("A tool you used or plan to use: returns tools often used with it. Omit for popular or personalised picks."),
  limit: z.number().int().min(1).max(50).optional().describe("How many recommendations, 1 to 50 (default 5)."),
};

const recommendationsOutput = {
  recommendations: z
    .array(z.looseObject({ tool_id: z.string(), tool_name: z.string(), reason: z.string(), score: z.number() }))
    .describe("Recommended tools, strongest first, each with why."),
};

export function registerCatalogTools(ctx: ToolContext): void {
  ctx.server.registerTool(
    "search_tools",
    {
      title: "Search tools",
      description:
        "Find callable tools in the Toolport catalog by what you want to do. Use it first, before batch_execute_tools, to get tool ids and their parameters. " +
        "Returns tools with id, name, description, parameters (name -> type, required, description, and enum, default, format or schema where they constrain the value), readiness for your key " +
        "(`ready`, `needs_credential` with a configuration_url: the console page where your operator connects the service's credential; `unavailable`) and, for tools called in the last 30 days, reliability (success rate, calls, median seconds). " +
        "Next: call the best match with batch_execute_tools, passing its id and a tool_input built from its parameters.",
      inputSchema: z.object(searchInput),
      outputSchema: z.looseObject(searchOutput),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args, extra) =>
      call(
        ctx,
        callerOf(extra),
        (api, headers) =>
          api.GET("/v1/tools/public/search", {
            params: {
              query: { query: args.query, limit: args.limit, service_id: args.service_id, ready_only: args.ready_only },
            },
            headers,
          }),
        (body) => {
          const tools = listUnder("tools")(body).tools as Record<string, unknown>[];
          return { tools: args.detail === "full" ? tools : tools.map(compactTool) };
        },
      ),
  );

  ctx.server.registerTool(
    "get_recommendations",
    {
      title: "Get tool recommendations",
      description:
        "Suggest tools worth using: with a tool_id, tools other callers used together with it; without, popular tools (personalised when your key has history). " +
        "Returns tool_id, tool_name, description, service, reason and score. Next: look a suggestion up with search_tools or call it with batch_execute_tools.",
      inputSchema: z.object(recommendationsInput),
      outputSchema: z.looseObject(recommendationsOutput),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args, extra) =>
      call(
        ctx,
        callerOf(extra),
        (api, headers) =>
          api.GET("/v1/tools/recommended", { params: { query: { tool_id: args.tool_id, limit: args.limit } }, headers }),
        listUnder("recommendations"),
      ),
  );
}
