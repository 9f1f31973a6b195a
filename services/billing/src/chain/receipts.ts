/**
 * Reads what deposits need from the deposit network's JSON-RPC endpoint: the receipt of a transaction
 * (status, block, decoded ERC-20 Transfer logs) and the latest block number for a confirmation, and the
 * token's Transfer logs over a block range for the deposit watcher. Failures of the node are
 * UNAVAILABLE: the caller may retry; nothing is credited meanwhile.
 */
import { unavailable } from "@toolport/kit/errors";
import { getAddress, id, JsonRpcProvider, Network, zeroPadValue } from "ethers";
import type { ReceiptFacts, ScannedTransfer, TransferLog } from "../domain/deposits.js";

/** keccak256("Transfer(address,address,uint256)"), topic 0 of every ERC-20 Transfer log. */
export const TRANSFER_TOPIC = id("Transfer(address,address,uint256)");

export class ChainReader {
  private readonly provider: JsonRpcProvider;

  constructor(
    rpcUrl: string,
    private readonly chainId: bigint,
  ) {
    // A static network: no background polling to discover the chain; we check it per call instead.
    this.provider = new JsonRpcProvider(rpcUrl, Network.from(chainId), {
      staticNetwork: true,
      batchMaxCount: 1,
      cacheTimeout: -1, // every confirmation reads the chain as it is now
    });
  }

  async receipt(txHash: string): Promise<{ receipt: ReceiptFacts | null; latestBlock: bigint }> {
    return this.reading(async () => {
      const [raw, latest] = await Promise.all([this.provider.getTransactionReceipt(txHash), this.provider.getBlockNumber()]);
      if (!raw) return { receipt: null, latestBlock: BigInt(latest) };
      const transfers: TransferLog[] = [];
      for (const log of raw.logs) {
        // Transfer(address indexed from, address indexed to, uint256 value): 3 topics, 32-byte data.
        if (log.topics.length !== 3 || log.topics[0] !== TRANSFER_TOPIC) continue;
        transfers.push({
          token: log.address.toLowerCase(),
          from: topicAddress(log.topics[1] as string),
          to: topicAddress(log.topics[2] as string),
          value: BigInt(log.data),
        });
      }
      return {
        receipt: { succeeded: raw.status === 1, blockNumber: BigInt(raw.blockNumber), transfers },
        latestBlock: BigInt(latest),
      };
    });
  }

  /** The number of the newest block. */
  async latestBlock(): Promise<bigint> {
    return this.reading(async () => BigInt(await this.provider.getBlockNumber()));
  }

  /**
   * `token`'s Transfer logs in blocks `from..to` (both included), in chain order. Nodes return logs of
   * successful transactions only (a reverted transaction's logs are discarded), so each is a real transfer.
   */
  async transfers(token: string, from: bigint, to: bigint): Promise<ScannedTransfer[]> {
    return this.reading(async () => {
      const logs = await this.provider.getLogs({ address: token, topics: [TRANSFER_TOPIC], fromBlock: from, toBlock: to });
      const out: ScannedTransfer[] = [];
      for (const log of logs) {
        if (log.topics.length !== 3 || log.removed) continue;
        out.push({
          token: log.address.toLowerCase(),
          from: topicAddress(log.topics[1] as string),
          to: topicAddress(log.topics[2] as string),
          value: BigInt(log.data),
          txHash: log.transactionHash.toLowerCase(),
          blockNumber: BigInt(log.blockNumber),
          logIndex: log.index,
        });
      }
      return out;
    });
  }

  /** Runs `read` after checking the endpoint serves the deposit network; node failures become UNAVAILABLE. */
  private async reading<T>(read: () => Promise<T>): Promise<T> {
    try {
      const chain = BigInt(await this.provider.send("eth_chainId", []));
      if (chain !== this.chainId) {
        throw unavailable(
          "deposit_network_mismatch",
          `the configured RPC endpoint serves chain ${chain}, not the deposit network ${this.chainId}`,
        );
      }
      return await read();
    } catch (err) {
      if ((err as { name?: string }).name === "DomainError") throw err;
      throw unavailable("deposit_network_unavailable", "the deposit network could not be read; try again shortly", {
        details: { retry_after_seconds: 5 },
        cause: err,
      });
    }
  }

  destroy(): void {
    this.provider.destroy();
  }
}

function topicAddress(topic: string): string {
  // The address is the low 20 bytes of the 32-byte topic.
  return getAddress(`0x${zeroPadValue(topic, 32).slice(-40)}`).toLowerCase();
}
