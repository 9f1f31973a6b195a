import { HDNodeWallet, Mnemonic } from "ethers";
import { describe, expect, it } from "vitest";
import { DepositAddresses, parseXpub } from "./deposit-addresses.js";

// The well-known development mnemonic: its keys are public, which is what a test wants.
const phrase = "test test test test test test test test test test test junk";
const account = HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase(phrase), "m/44'/60'/0'");

describe("DepositAddresses", () => {
  it("derives from the xpub the same addresses the private key derives at m/44'/60'/0'/0/i", () => {
    const addresses = new DepositAddresses(account.neuter().extendedKey);
    // m/44'/60'/0'/0/0 of this mnemonic is the famous first development account.
    expect(addresses.addressAt(0n)).toBe("0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266");
    for (const i of [1, 7, 1000]) {
      expect(addresses.addressAt(BigInt(i))).toBe(account.deriveChild(0).deriveChild(i).address.toLowerCase());
    }
  });

  it("gives every index its own address", () => {
    const addresses = new DepositAddresses(account.neuter().extendedKey);
    const seen = new Set(Array.from({ length: 50 }, (_, i) => addresses.addressAt(BigInt(i))));
    expect(seen.size).toBe(50);
  });

  it("refuses an extended private key", () => {
    expect(() => parseXpub(account.extendedKey)).toThrow(/PUBLIC key/);
  });

  it("refuses text that is not an extended key", () => {
    expect(() => parseXpub("xpub-not-really")).toThrow();
  });
});
