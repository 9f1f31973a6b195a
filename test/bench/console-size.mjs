// Console size: what a browser downloads to show the console's first screen, and each screen's own chunk,
// raw, gzip (level 9, as the gateway serves it) and brotli (quality 9). The first load is the entry script
// of gateway/console/dist/index.html, every script it preloads (modulepreload) and the stylesheet; the issue's
// budget is 200 KB of compressed JavaScript for it. Screens load their chunk when first opened.
// Usage: pnpm --filter @toolport/console build && node test/bench/console-size.mjs
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const BUDGET = 200 * 1024;
const dist = fileURLToPath(new URL("../../gateway/console/dist/", import.meta.url));
let html;
try {
  html = readFileSync(path.join(dist, "index.html"), "utf8");
} catch {
  console.error("gateway/console/dist is not built: pnpm --filter @toolport/console build");
  process.exit(1);
}

const sizes = (file) => {
  const raw = readFileSync(path.join(dist, file));
  return {
    raw: raw.length,
    gzip: gzipSync(raw, { level: 9 }).length,
    br: brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 9 } }).length,
  };
};
const kb = (n) => `${(n / 1024).toFixed(1)} KB`.padStart(9);
const line = (name, s) => `  ${name.padEnd(34)} ${kb(s.raw)} ${kb(s.gzip)} ${kb(s.br)}`;

const referenced = [...html.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+)"/g)].map((m) => m[1]);
const firstJs = referenced.filter((f) => f.endsWith(".js"));
const firstCss = referenced.filter((f) => f.endsWith(".css"));
const lazy = readdirSync(path.join(dist, "assets"))
  .map((f) => `assets/${f}`)
  .filter((f) => f.endsWith(".js") && !firstJs.includes(f));

console.log(`  ${"file".padEnd(34)} ${"raw".padStart(9)} ${"gzip".padStart(9)} ${"brotli".padStart(9)}`);
console.log("first load:");
const total = { raw: 0, gzip: 0, br: 0 };
for (const f of firstJs) {
  const s = sizes(f);
  for (const k of Object.keys(total)) total[k] += s[k];
  console.log(line(f, s));
}
for (const f of firstCss) console.log(line(f, sizes(f)));
console.log(line("= first-load JavaScript", total));
console.log("screens (loaded when opened):");
let largest = { f: "", gzip: 0 };
for (const f of lazy.sort()) {
  const s = sizes(f);
  if (s.gzip > largest.gzip) largest = { f, gzip: s.gzip };
  console.log(line(f, s));
}
console.log(
  `first-load JavaScript: ${(total.gzip / 1024).toFixed(1)} KB gzip, ${(total.br / 1024).toFixed(1)} KB brotli; ` +
    `budget ${BUDGET / 1024} KB compressed: ${total.gzip <= BUDGET ? "within" : "OVER"} (${((100 * total.gzip) / BUDGET).toFixed(0)}%)`,
);
console.log(`with the largest screen (${largest.f}): ${((total.gzip + largest.gzip) / 1024).toFixed(1)} KB gzip`);
process.exit(total.gzip <= BUDGET ? 0 : 1);
