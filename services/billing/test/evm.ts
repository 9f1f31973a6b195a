/**
 * A real local EVM node for deposit tests: Hardhat's JSON-RPC node (installed from the npm registry,
 * nothing downloaded at run time), chain id 8453 like Base, on a free port; and a standard ERC-20
 * (OpenZeppelin's ERC20, compiled here by solc-js from the @openzeppelin/contracts package) deployed
 * as the USDC contract, 6 decimals.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { Contract, ContractFactory, JsonRpcProvider, type JsonRpcSigner, Network } from "ethers";
import { freePort } from "../../../deploy/local/infra.mjs";

const require = createRequire(import.meta.url);
const configPath = fileURLToPath(new URL("./evm/hardhat.config.cjs", import.meta.url));

const TOKEN_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;
import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
contract TestToken is ERC20 {
  uint8 private immutable _decimals;
  constructor(string memory name, string memory symbol, uint8 decimals_) ERC20(name, symbol) { _decimals = decimals_; }
  function decimals() public view override returns (uint8) { return _decimals; }
  function mint(address to, uint256 amount) external { _mint(to, amount); }
}`;

let compiled: { abi: object[]; bytecode: string } | undefined;

/** Compiles the token once per test process with solc-js (the compiler ships inside the npm package). */
function tokenArtifact(): { abi: object[]; bytecode: string } {
  if (compiled) return compiled;
  const solc = require("solc");
  const input = {
    language: "Solidity",
    sources: { "TestToken.sol": { content: TOKEN_SOURCE } },
    settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } } },
  };
  const findImports = (path: string) => {
    try {
      return { contents: readFileSync(require.resolve(path), "utf8") };
    } catch (err) {
      return { error: String(err) };
    }
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const errors = (output.errors ?? []).filter((e: { severity: string }) => e.severity === "error");
  if (errors.length) throw new Error(`solc: ${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join("\n")}`);
  const contract = output.contracts["TestToken.sol"].TestToken;
  compiled = { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
  return compiled;
}

export interface EvmNode {
  url: string;
  provider: JsonRpcProvider;
  /** Hardhat's unlocked development account #0 (deployer, minter). */
  deployer: JsonRpcSigner;
  deployToken(symbol: string, decimals?: number): Promise<Contract>;
  /** Mines `blocks` empty blocks. */
  mine(blocks: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startEvmNode(): Promise<EvmNode> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const cli = require.resolve("hardhat/internal/cli/cli.js");
  const child: ChildProcess = spawn(
    process.execPath,
    [cli, "--config", configPath, "node", "--hostname", "127.0.0.1", "--port", String(port)],
    {
      cwd: fileURLToPath(new URL("./evm/", import.meta.url)),
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: "true", DO_NOT_TRACK: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout?.on("data", (d) => {
    output += String(d);
  });
  child.stderr?.on("data", (d) => {
    output += String(d);
  });
  const deadline = Date.now() + 60_000;
  while (!output.includes("Started HTTP and WebSocket JSON-RPC server")) {
    if (child.exitCode !== null) throw new Error(`hardhat node exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`hardhat node did not start within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const provider = new JsonRpcProvider(url, Network.from(8453), { staticNetwork: true, batchMaxCount: 1, cacheTimeout: -1 });
  const deployer = await provider.getSigner(0);
  return {
    url,
    provider,
    deployer,
    async deployToken(symbol, decimals = 6) {
      const { abi, bytecode } = tokenArtifact();
      const factory = new ContractFactory(abi, bytecode, deployer);
      const token = await factory.deploy(symbol === "USDC" ? "USD Coin" : symbol, symbol, decimals);
      await token.waitForDeployment();
      return new Contract(await token.getAddress(), abi, deployer);
    },
    async mine(blocks) {
      await provider.send("hardhat_mine", [`0x${blocks.toString(16)}`]);
    },
    async stop() {
      provider.destroy();
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}
