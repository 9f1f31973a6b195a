/** EVM address display: EIP-55 mixed-case checksum, so a mistyped character is caught by wallets. */
import { getAddress } from "ethers";

export const checksumAddress = (address: string): string => getAddress(address);
