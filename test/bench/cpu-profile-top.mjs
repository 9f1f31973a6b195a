// Where a CPU profile's time went: the top functions by self time, then the self time by where the code
// lives (a package, one of ours, or the garbage collector), for a V8 .cpuprofile such as
// `BENCH_PROFILE=toolport node test/bench/execution-gateway.mjs ...` writes to /tmp/toolport-prof/<process>.
// Idle samples are left out. --from=<text> skips start-up: counting begins at the first sample with a frame
// whose script URL contains <text> (for the call path, --from=services/execution/dist/handlers). Node's own
// frames (node:...) and native ones are charged to the nearest caller outside node in the by-owner table.
// Usage: node test/bench/cpu-profile-top.mjs <file.cpuprofile> [top=15] [--from=<text>]
import { readFileSync } from "node:fs";

const args = process.argv.slice(2);
const from = args.find((a) => a.startsWith("--from="))?.slice("--from=".length);
const [file, topArg = "15"] = args.filter((a) => !a.startsWith("--"));
if (!file) {
  console.error("usage: node test/bench/cpu-profile-top.mjs <file.cpuprofile> [top=15] [--from=<text>]");
  process.exit(2);
}
const top = Number(topArg);
const profile = JSON.parse(readFileSync(file, "utf8"));
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);

function* frames(id) {
  for (let x = id; x !== undefined; x = parent.get(x)) yield nodes.get(x).callFrame;
}

/** A script URL as a short name: the package and its file, or the path inside the repository. */
function shortUrl(url) {
  const pkg = url.match(/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)\/(.*)$/);
  if (pkg) return `${pkg[1]}:${pkg[2]}`;
  const ours = url.match(/\/((?:services|gateway|mcp-server|proto|test)\/.*)$/);
  return ours ? ours[1] : url;
}

/** The package, or our own folder, whose code a sample's time is charged to. */
function owner(id) {
  for (const frame of frames(id)) {
    if (!frame.url || frame.url.startsWith("node:")) continue;
    const pkg = frame.url.match(/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)\//);
    if (pkg) return pkg[1];
    const ours = frame.url.match(/\/((?:services|gateway|mcp-server|proto|test)\/[^/]+)\//);
    return ours ? ours[1] : frame.url;
  }
  const name = nodes.get(id).callFrame.functionName;
  return name.startsWith("(") ? name : "(node, no caller of ours)";
}

const bySelf = new Map();
const byOwner = new Map();
let busy = 0;
let started = from === undefined;
let startedAt = 0;
let at = profile.startTime;
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i];
  const id = profile.samples[i];
  if (!started && [...frames(id)].some((f) => f.url.includes(from))) {
    started = true;
    startedAt = at;
  }
  const frame = nodes.get(id).callFrame;
  if (!started || frame.functionName === "(idle)") continue;
  // A sample lasts until the next one.
  const us = profile.timeDeltas[i + 1] ?? 0;
  const name = `${frame.functionName || "(anonymous)"}${frame.url ? ` ${shortUrl(frame.url)}:${frame.lineNumber + 1}` : ""}`;
  bySelf.set(name, (bySelf.get(name) ?? 0) + us);
  const who = owner(id);
  byOwner.set(who, (byOwner.get(who) ?? 0) + us);
  busy += us;
}

const seconds = (us) => (us / 1e6).toFixed(2);
console.log(
  `${file}: ${seconds(busy)} s busy (idle left out) of ${seconds(profile.endTime - profile.startTime)} s profiled` +
    (from === undefined
      ? ""
      : started
        ? `, from ${seconds(startedAt - profile.startTime)} s (--from=${from})`
        : `; nothing matched --from=${from}`),
);
const print = (title, map) => {
  console.log(`\n${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`  ${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${key}`);
  }
};
print(`Top ${top} functions by self time`, bySelf);
print(`Self time by owner (top ${top})`, byOwner);
