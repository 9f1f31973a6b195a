// Hardhat configuration of the local EVM node the billing tests start (`hardhat node`). Nothing is
// compiled by Hardhat: the test deploys precompiled bytecode, so every path points at an empty folder
// under the system temporary directory and no compiler is ever downloaded.
const os = require("node:os");
const path = require("node:path");
const scratch = path.join(os.tmpdir(), "toolport-billing-hardhat");
module.exports = {
  paths: {
    root: __dirname,
    sources: path.join(scratch, "sources"),
    cache: path.join(scratch, "cache"),
    artifacts: path.join(scratch, "artifacts"),
    tests: path.join(scratch, "tests"),
  },
  networks: { hardhat: { chainId: 8453 } },
};
