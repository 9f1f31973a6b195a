/**
 * Matching an on-chain USDC transfer to the caller's wallet (spec item 19): the receipt must be a
 * successful transaction with enough confirmations whose USDC Transfer logs pay the caller's own
 * deposit address exactly the amount the caller expects.
 */
import { failedPrecondition, invalidArgument } from "@toolport/kit/errors";

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

export function validateDepositRequest(txHash: string, expectedAmountAtomic: bigint): string {
  if (!TX_HASH.test(txHash)) {
    throw invalidArgument("invalid_request", "tx_hash must be a 0x-prefixed 32-byte transaction hash (66 characters)", {
      details: { field: "tx_hash" },
    });
  }
  if (expectedAmountAtomic <= 0n) {
    throw invalidArgument("invalid_request", "expected_amount_atomic must be a positive number of USDC atomic units", {
      details: { field: "expected_amount_atomic" },
    });
  }
  return txHash.toLowerCase();
}

/** An ERC-20 Transfer log, decoded. Addresses lower-case. */
export interface TransferLog {
  token: string;
  from: string;
  to: string;
  value: bigint;
}

export interface ReceiptFacts {
  /** False when the transaction reverted. */
  succeeded: boolean;
  blockNumber: bigint;
  transfers: TransferLog[];
}

export interface DepositMatch {
  amount: bigint;
  blockNumber: bigint;
}

/**
 * The amount to credit, or the reason to refuse. `receipt` null means the node does not know the
 * transaction as mined (unknown hash, or still pending).
 */
export function matchDeposit(args: {
  receipt: ReceiptFacts | null;
  latestBlock: bigint;
  requiredConfirmations: number;
  usdcContract: string;
  depositAddress: string;
  expectedAmount: bigint;
}): DepositMatch {
  const { receipt, latestBlock, requiredConfirmations, expectedAmount } = args;
  if (!receipt) {
    throw failedPrecondition("deposit_not_confirmed", "the transaction is not mined yet (or unknown on the deposit network)", {
      details: { field: "tx_hash", confirmations: 0, required_confirmations: requiredConfirmations },
    });
  }
  if (!receipt.succeeded) {
    throw invalidArgument("deposit_transaction_failed", "the transaction reverted on chain; nothing was transferred", {
      details: { field: "tx_hash" },
    });
  }
  const confirmations = latestBlock >= receipt.blockNumber ? Number(latestBlock - receipt.blockNumber + 1n) : 0;
  if (confirmations < requiredConfirmations) {
    throw failedPrecondition(
      "deposit_not_confirmed",
      `the transaction has ${confirmations} confirmation(s); ${requiredConfirmations} are required: confirm again later`,
      { details: { field: "tx_hash", confirmations, required_confirmations: requiredConfirmations } },
    );
  }
  const usdc = args.usdcContract.toLowerCase();
  const address = args.depositAddress.toLowerCase();
  const usdcTransfers = receipt.transfers.filter((t) => t.token === usdc);
  if (usdcTransfers.length === 0) {
    throw invalidArgument("deposit_transfer_not_found", "the transaction contains no USDC transfer", {
      details: { field: "tx_hash", usdc_contract: usdc },
    });
  }
  const mine = usdcTransfers.filter((t) => t.to === address);
  if (mine.length === 0) {
    throw invalidArgument(
      "deposit_address_mismatch",
      "the transaction's USDC transfer goes to another address, not to your wallet's deposit address",
      { details: { field: "tx_hash", deposit_address: address, recipients: [...new Set(usdcTransfers.map((t) => t.to))] } },
    );
  }
  const amount = mine.reduce((sum, t) => sum + t.value, 0n);
  if (amount !== expectedAmount) {
    throw invalidArgument(
      "deposit_amount_mismatch",
      `the transaction transfers ${amount} atomic units to your deposit address, not the ${expectedAmount} expected`,
      {
        details: {
          field: "expected_amount_atomic",
          transferred_atomic: amount.toString(),
          expected_atomic: expectedAmount.toString(),
        },
      },
    );
  }
  return { amount, blockNumber: receipt.blockNumber };
}

/** A Transfer log found by scanning blocks. */
export interface ScannedTransfer extends TransferLog {
  txHash: string;
  blockNumber: bigint;
  logIndex: number;
}

/** One deposit the watcher credits: what a transaction pays one deposit address, summed. */
export interface WatchedDeposit {
  txHash: string;
  address: string;
  amount: bigint;
  blockNumber: bigint;
}

/**
 * What the watcher should do this round, from its stored cursor (`next`: the first block not scanned,
 * null before its first round) and the newest block. A transfer in block b has `latest - b + 1`
 * confirmations, so blocks up to `latest - confirmations + 1` are confirmed enough to credit.
 * - `start`: no cursor yet: store `next` (the configured start block, or the block after the newest
 *   confirmed one: earlier transfers are confirmed by hash) and scan from there next round.
 * - `scan`: read blocks `from..to` (at most `maxBlocks`), then store `to + 1`; `more` when confirmed
 *   blocks remain after `to`.
 * - `wait`: nothing confirmed enough past the cursor yet.
 */
export type WatchStep =
  | { kind: "start"; next: bigint }
  | { kind: "scan"; from: bigint; to: bigint; more: boolean }
  | { kind: "wait" };

export function watchStep(args: {
  next: bigint | null;
  latest: bigint;
  confirmations: number;
  maxBlocks: number;
  startBlock?: number | undefined;
}): WatchStep {
  const confirmedHead = args.latest - BigInt(args.confirmations) + 1n;
  if (args.next === null) {
    if (args.startBlock !== undefined) return { kind: "start", next: BigInt(args.startBlock) };
    return { kind: "start", next: confirmedHead < 0n ? 0n : confirmedHead + 1n };
  }
  if (args.next > confirmedHead) return { kind: "wait" };
  const last = args.next + BigInt(args.maxBlocks) - 1n;
  const to = last < confirmedHead ? last : confirmedHead;
  return { kind: "scan", from: args.next, to, more: to < confirmedHead };
}

/**
 * The deposits in scanned transfers: USDC transfers (of `usdcContract` only) to one of the deposit
 * addresses, summed per transaction and address (the amount confirm-deposit would credit for that
 * transaction), in chain order. Transfers to any other address, of any other token, or of zero are not
 * deposits.
 */
export function depositsIn(transfers: ScannedTransfer[], usdcContract: string, depositAddresses: Set<string>): WatchedDeposit[] {
  const usdc = usdcContract.toLowerCase();
  const found = new Map<string, WatchedDeposit & { logIndex: number }>();
  for (const t of transfers) {
    if (t.token !== usdc || t.value <= 0n || !depositAddresses.has(t.to)) continue;
    const key = `${t.txHash}/${t.to}`;
    const seen = found.get(key);
    if (seen) seen.amount += t.value;
    else found.set(key, { txHash: t.txHash, address: t.to, amount: t.value, blockNumber: t.blockNumber, logIndex: t.logIndex });
  }
  return [...found.values()]
    .sort((a, b) => (a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1))
    .map(({ logIndex: _, ...deposit }) => deposit);
}
