import { describe, expect, it } from "vitest";
import { fundingOptions } from "./funding.js";

const all = { stripe: true, depositKey: true, depositNetwork: true, watching: true, requiredConfirmations: 12 };

describe("fundingOptions", () => {
  it("offers everything configured, with automatic deposits when the watcher runs", () => {
    expect(fundingOptions(all)).toEqual({
      cardCheckout: { available: true },
      crypto: { available: true },
      confirmDeposit: { available: true },
      automaticDeposits: true,
      requiredConfirmations: 12,
    });
  });

  it("names the refusal each unconfigured method would answer with", () => {
    const bare = fundingOptions({ ...all, stripe: false, depositKey: false, depositNetwork: false });
    expect(bare.cardCheckout).toMatchObject({ available: false, reason: "card_payments_not_configured" });
    expect(bare.crypto).toMatchObject({ available: false, reason: "deposit_wallet_not_configured" });
    expect(bare.confirmDeposit).toMatchObject({ available: false, reason: "deposit_wallet_not_configured" });
    expect(bare.automaticDeposits).toBe(false);
    const noNetwork = fundingOptions({ ...all, depositNetwork: false });
    expect(noNetwork.crypto.available).toBe(true);
    expect(noNetwork.confirmDeposit).toMatchObject({ available: false, reason: "deposit_network_not_configured" });
    expect(noNetwork.automaticDeposits).toBe(false);
    for (const option of [bare.cardCheckout, bare.crypto, noNetwork.confirmDeposit]) expect(option.message).toMatch(/not/);
  });

  it("has no automatic deposits when the watcher is turned off", () => {
    expect(fundingOptions({ ...all, watching: false }).automaticDeposits).toBe(false);
  });
});
