// What a call's server side spends reading its caller, side by side in one run (issue 36): the principal
// a tool call carries in its metadata (toolport-principal-bin, as the gateway's agent key makes it: ids,
// tier, agent name, grants), read
//   decoded:  base64, then protobuf, on every call (the kit's server interceptor until issue 36);
//   cached:   the kit's decodedPrincipal (services/lib/kit/dist/rpc.js; build first), which decodes a
//             value once and hands its calls the same frozen object.
// Rows take turns in rounds; per row the median µs per read.
// Usage: node test/bench/principal-decode.mjs [reads per round=200000] [rounds=5]
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));
const kit = path.join(root, "services/lib/kit");
const require = createRequire(path.join(kit, "package.json"));
const { create, fromBinary, toBinary } = require("@bufbuild/protobuf");
const { decodeBinaryHeader, encodeBinaryHeader } = require("@connectrpc/connect");
const { PrincipalSchema } = await import(require.resolve("@toolport/proto/toolport/common/v1/principal_pb"));
const { decodedPrincipal } = await import(path.join(kit, "dist/rpc.js"));

const [perRound = 200_000, rounds = 5] = process.argv.slice(2).map(Number);
const id = (n) => `${n}b6f3c3e-5a4e-4f5b-9d7e-1a2b3c4d5e6f`;
const principal = create(PrincipalSchema, {
  accountId: id(0),
  organizationId: id(1),
  keyId: id(2),
  authMethod: 1,
  orgRole: 1,
  tier: "free",
  agentName: "bench-agent",
  accountKind: 1,
  personalOrganizationId: id(1),
  grants: [1, 2, 3, 4, 5, 6],
  roleGrants: [1, 2, 3, 4, 5, 6],
});
const raw = encodeBinaryHeader(toBinary(PrincipalSchema, principal));
if (fromBinary(PrincipalSchema, decodeBinaryHeader(raw)).accountId !== decodedPrincipal(raw).accountId)
  throw new Error("the two rows read different principals");

const rows = {
  decoded: () => fromBinary(PrincipalSchema, decodeBinaryHeader(raw)),
  cached: () => decodedPrincipal(raw),
};
const times = Object.fromEntries(Object.keys(rows).map((k) => [k, []]));
let sink;
for (let r = 0; r < rounds; r++) {
  for (const [name, read] of Object.entries(rows)) {
    const started = performance.now();
    for (let i = 0; i < perRound; i++) sink = read();
    times[name].push(((performance.now() - started) * 1000) / perRound);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `principal metadata: ${raw.length} characters; ${perRound} reads per round, ${rounds} rounds, Node ${process.version}`,
);
for (const name of Object.keys(rows))
  console.log(`  ${name.padEnd(8)} ${median(times[name]).toFixed(3).padStart(7)} µs per read`);
console.log(`  decoded / cached: ${(median(times.decoded) / median(times.cached)).toFixed(0)}x`);
if (!sink) throw new Error("unreachable");
