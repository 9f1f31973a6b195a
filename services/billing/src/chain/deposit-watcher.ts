/**
 * The deposit watcher: reads the USDC contract's Transfer logs on the deposit network and credits each
 * transfer to a wallet's deposit address by itself, once it has BILLING_DEPOSIT_CONFIRMATIONS blocks,
 * so a deposit lands without anyone confirming it by hash. Started when a deposit key and an RPC
 * endpoint are configured (BILLING_DEPOSIT_WATCH=false turns it off).
 *
 * - Exactly once: it credits through FundingStore.creditDeposit, the very guard confirm-deposit uses
 *   (one `deposits` row per transaction hash), so a transfer credited here is a 409 to a later confirm
 *   by hash, and one confirmed by hash first is skipped here.
 * - Restarts: its place is the stored cursor (deposit_watch_cursors), written after the blocks before
 *   it were credited; a crash in between scans those blocks again, finding their deposits credited.
 * - Bounded: one eth_getLogs of at most BILLING_DEPOSIT_WATCH_MAX_BLOCKS blocks per step; behind, it
 *   steps again at once, caught up it sleeps BILLING_DEPOSIT_WATCH_INTERVAL_MS.
 * - Replicas: each round holds an advisory lock, so only one replica scans at a time.
 * It logs each credit (wallet, hash, amount, block) and never the RPC URL, which may carry a key.
 */

import type { Logger } from "@toolport/kit/logger";
import { depositsCredited, depositWatcherLagBlocks, depositWatcherNextBlock } from "@toolport/kit/metrics";
import type { BackgroundWork } from "@toolport/kit/service";
import { DEPOSIT_NETWORK } from "../config.js";
import { depositsIn, watchStep } from "../domain/deposits.js";
import type { DepositCursorStore } from "../store/deposit-cursor.js";
import type { FundingStore } from "../store/funding.js";
import type { WalletStore } from "../store/wallets.js";
import type { ChainReader } from "./receipts.js";

export interface DepositWatcherOptions {
  chain: ChainReader;
  cursors: DepositCursorStore;
  wallets: WalletStore;
  funding: FundingStore;
  usdcContract: string;
  confirmations: number;
  maxBlocks: number;
  intervalMs: number;
  startBlock?: number | undefined;
  log: Logger;
}

/** What one step did: `more` when confirmed blocks remain to scan right away. */
export interface StepOutcome {
  credited: number;
  more: boolean;
}

/** One step: read the cursor, scan the next bounded range of confirmed blocks, credit, move the cursor. */
export async function watchOnce(o: DepositWatcherOptions): Promise<StepOutcome> {
  const token = o.usdcContract.toLowerCase();
  let outcome: StepOutcome = { credited: 0, more: false };
  await o.cursors.round(DEPOSIT_NETWORK, token, async (next) => {
    const latest = await o.chain.latestBlock();
    const step = watchStep({ next, latest, confirmations: o.confirmations, maxBlocks: o.maxBlocks, startBlock: o.startBlock });
    const confirmedHead = latest - BigInt(o.confirmations) + 1n;
    if (step.kind === "start") {
      o.log.info({ network: DEPOSIT_NETWORK, token, next_block: step.next.toString() }, "deposit watcher starts");
      report(step.next, confirmedHead);
      return step.next;
    }
    if (step.kind === "wait") {
      report(next!, confirmedHead);
      return null;
    }
    const transfers = await o.chain.transfers(token, step.from, step.to);
    const ours = await o.wallets.byDepositAddresses([...new Set(transfers.map((t) => t.to))]);
    const deposits = depositsIn(transfers, token, new Set(ours.keys()));
    const credited = await o.funding.creditedDeposits([...new Set(deposits.map((d) => d.txHash))]);
    const creditedNow = new Set<string>();
    for (const deposit of deposits) {
      const owner = ours.get(deposit.address)!;
      if (creditedNow.has(deposit.txHash)) {
        // One transaction paying several deposit addresses: a transaction hash is credited once.
        o.log.warn(
          { tx_hash: deposit.txHash, wallet_id: owner.walletId, amount_atomic: deposit.amount.toString() },
          "deposit transaction pays several deposit addresses; only the first was credited",
        );
        continue;
      }
      if (credited.has(deposit.txHash)) {
        o.log.debug({ tx_hash: deposit.txHash, wallet_id: owner.walletId }, "deposit credited before; skipped");
        continue;
      }
      try {
        const done = await o.funding.creditDeposit({
          accountId: owner.accountId,
          txHash: deposit.txHash,
          amount: deposit.amount,
          blockNumber: deposit.blockNumber,
          creditedBy: "watcher",
        });
        creditedNow.add(deposit.txHash);
        depositsCredited.inc({ source: "watcher" });
        o.log.info(
          {
            wallet_id: done.walletId,
            tx_hash: deposit.txHash,
            amount_atomic: deposit.amount.toString(),
            block: deposit.blockNumber.toString(),
          },
          "deposit credited by the watcher",
        );
      } catch (err) {
        if ((err as { reason?: string }).reason !== "deposit_already_credited") throw err;
        // Confirmed by hash between our read of `deposits` and this credit.
        o.log.info(
          { tx_hash: deposit.txHash, wallet_id: owner.walletId },
          "deposit transaction already credited; not credited again",
        );
      }
    }
    report(step.to + 1n, confirmedHead);
    outcome = { credited: creditedNow.size, more: step.more };
    return step.to + 1n;
  });
  return outcome;
}

function report(next: bigint, confirmedHead: bigint): void {
  depositWatcherNextBlock.set(Number(next));
  depositWatcherLagBlocks.set(confirmedHead >= next ? Number(confirmedHead - next + 1n) : 0);
}

export function startDepositWatcher(o: DepositWatcherOptions): BackgroundWork {
  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      let more = false;
      try {
        more = (await watchOnce(o)).more;
      } catch (err) {
        // Our errors carry fixed messages; a node's failure is wrapped (ChainReader), so no URL is logged.
        o.log.warn({ err: (err as Error).message }, "deposit watcher round failed; retrying next round");
      }
      if (more || stopped) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, o.intervalMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
