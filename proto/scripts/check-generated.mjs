// Fails when gen/ is stale: regenerates into a temporary folder and compares it with the committed gen/.
// Run from proto/ (`pnpm --filter @toolport/proto check`); uses the local buf and protoc-gen-es.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(root, "node_modules", ".bin");
const scratch = mkdtempSync(join(tmpdir(), "toolport-proto-"));

function listFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath ?? entry.path, entry.name)))
    .sort();
}

try {
  execFileSync(join(bin, "buf"), ["generate", "--output", scratch], {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}` },
  });
  const fresh = join(scratch, "gen");
  const committed = join(root, "gen");
  const freshFiles = listFiles(fresh);
  const committedFiles = listFiles(committed);
  const problems = [];
  for (const file of new Set([...freshFiles, ...committedFiles])) {
    if (!freshFiles.includes(file)) problems.push(`gen/${file} is no longer generated (delete it)`);
    else if (!committedFiles.includes(file)) problems.push(`gen/${file} is missing`);
    else if (!readFileSync(join(fresh, file)).equals(readFileSync(join(committed, file))))
      problems.push(`gen/${file} differs from its schema`);
  }
  if (problems.length > 0) {
    console.error(`Generated code is stale. Run \`pnpm --filter @toolport/proto generate\`.\n  ${problems.join("\n  ")}`);
    process.exit(1);
  }
  console.log(`gen/ is up to date (${freshFiles.length} files).`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
