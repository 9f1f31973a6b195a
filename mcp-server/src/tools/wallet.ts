/** Wallet tools: the key's spending limits (`get_spending_limits`) and adding funds (`fund_agent_wallet`). */
import { z } from "zod";
import { asObject, call, callerOf, requireKey, type ToolContext } from "./results.js";

const limitsOutput = {
  max_per_call_atomic: z.number().int().describe("Most one call may cost, in USDC atomic units (6 decimals)."),
  daily_limit_atomic: z
    .number()
    .int()
    .nullable()
    .describe("Most a day's calls may cost, in atomic units; null = no daily limit."),
};

const fundInput = {
  method: z
    .enum(["card_checkout", "crypto"])
    .describe("`card_checkout`: a hosted card payment page for the operator; `crypto`: the USDC deposit address to send to."),
  amount_cents: z
    .number()
    .int()
    .min(100)
    .optional()
    .describe("Amount in US cents, at least 100; required for card_checkout, ignored for crypto."),
};

const fundOutput = {
  wallet_id: z.string(),
  method: z.string(),
  checkout_url: z.string().nullable().describe("Open this in a browser to pay (card_checkout)."),
  deposit_address: z.string().nullable().describe("Send USDC here (crypto), on `network`."),
  balance_usdc: z.string().describe("Balance before this funding, six decimals."),
};

export function registerWalletTools(ctx: ToolContext): void {
  ctx.server.registerTool(
    "get_spending_limits",
    {
      title: "Get spending limits",
      description:
        "Show how much your key's account may spend on priced tools: the per-call ceiling and the daily limit, in USDC atomic units (1 USDC = 1000000). " +
        "Use it before running priced tools or when a call was refused for its cost. Next: fund_agent_wallet when the balance is short.",
      inputSchema: z.object({}),
      outputSchema: z.looseObject(limitsOutput),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (_args, extra) =>
      requireKey(callerOf(extra)) ??
      call(ctx, callerOf(extra), (api, headers) => api.GET("/v1/x402/settings", { headers }), asObject),
  );

  ctx.server.registerTool(
    "fund_agent_wallet",
    {
      title: "Fund the wallet",
      description:
        "Add money to your USDC wallet so priced tools can run. `card_checkout` with amount_cents returns a checkout_url for a person to pay in a browser " +
        "(the wallet is credited when payment completes); `crypto` returns the deposit address, network and USDC contract to send to. " +
        "Nothing is charged by this call itself. Next: retry the priced call once the balance is credited.",
      inputSchema: z.object(fundInput),
      outputSchema: z.looseObject(fundOutput),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (args, extra) =>
      requireKey(callerOf(extra)) ??
      call(
        ctx,
        callerOf(extra),
        (api, headers) =>
          api.POST("/v1/agents/wallets/fund", { body: { method: args.method, amount_cents: args.amount_cents }, headers }),
        asObject,
      ),
  );
}
