// Billing hold+capture throughput: the real billing process (services/billing/dist) against its own
// Postgres and NATS (started here on free ports in a temporary folder, durable settings: fsync on),
// driven over gRPC. Prints holds per second for one account (every hold queues on that wallet's row
// lock) and for many accounts (holds spread over wallets). Each unit of work is Hold then Capture.
// Usage: node test/bench/billing-holds.mjs [holds=2000] [concurrency=32] [accounts=100]
//   (build first: pnpm run build)
import { spawn } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createServiceClient } from "@toolport/kit/rpc";
import { BillingService } from "@toolport/proto/toolport/billing/v1/billing_service_pb";
import { freePort, startNats, startPostgres } from "../../deploy/local/infra.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const [holds = 2000, concurrency = 32, accounts = 100] = process.argv.slice(2).map(Number);
const WEBHOOK_SECRET = "whsec_bench";
const PRICE = 10_000n; // 1 cent

const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-bench-billing-"));
const quiet = { info() {}, warn() {}, error: console.error };
const pg = await startPostgres({ dataDir: path.join(dir, "pg"), port: await freePort(), log: quiet });
const nats = await startNats({ storeDir: path.join(dir, "nats"), port: await freePort(), log: quiet });
const port = await freePort();
const billing = spawn(process.execPath, [path.join(root, "services/billing/dist/main.js")], {
  env: {
    ...process.env,
    PORT: String(port),
    DATABASE_URL: pg.url,
    NATS_URL: nats.url,
    LOG_LEVEL: "warn",
    STRIPE_SECRET_KEY: "sk_test_bench",
    STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
  },
  stdio: ["ignore", "inherit", "inherit"],
});

async function cleanup() {
  billing.kill("SIGTERM");
  await new Promise((r) => billing.once("exit", r));
  await nats.stop();
  await pg.stop();
  rmSync(dir, { recursive: true, force: true });
}

try {
  const client = createServiceClient(BillingService, `http://127.0.0.1:${port}`, { timeoutMs: 60_000 });
  await waitForBilling(client);

  /** Credits through the production path: a Stripe-signed checkout.session.completed webhook. */
  async function fund(accountId, cents) {
    const { wallet } = await client.createWallet({ accountId });
    const payload = JSON.stringify({
      id: `evt_${randomUUID()}`,
      object: "event",
      type: "checkout.session.completed",
      data: {
        object: {
          id: `cs_${randomUUID()}`,
          object: "checkout.session",
          amount_total: cents,
          currency: "usd",
          payment_status: "paid",
          metadata: { wallet_id: wallet.walletId },
        },
      },
    });
    const t = Math.floor(Date.now() / 1000);
    const v1 = createHmac("sha256", WEBHOOK_SECRET).update(`${t}.${payload}`).digest("hex");
    await client.handleStripeWebhook({ payload: new TextEncoder().encode(payload), signature: `t=${t},v1=${v1}` });
  }

  async function run(label, accountIds) {
    for (const a of accountIds) await fund(a, 1_000_000);
    // Warm-up: connections, prepared plans.
    await drive(accountIds, Math.min(200, holds));
    const started = performance.now();
    const latencies = await drive(accountIds, holds);
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const p = (q) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(1);
    console.log(
      `${label.padEnd(26)} ${String(holds).padStart(5)} hold+capture in ${seconds.toFixed(2)} s = ${(holds / seconds).toFixed(0)} holds/s` +
        `  (hold+capture latency p50 ${p(0.5)} ms, p95 ${p(0.95)} ms)`,
    );
  }

  async function drive(accountIds, n) {
    const latencies = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < n) {
          const i = next++;
          const executionId = randomUUID();
          const t0 = performance.now();
          await client.hold({
            executionId,
            accountId: accountIds[i % accountIds.length],
            amountAtomic: PRICE,
            toolId: "bench",
            organizationId: "bench",
          });
          await client.capture({ executionId });
          latencies.push(performance.now() - t0);
        }
      }),
    );
    return latencies;
  }

  console.log(`billing hold+capture, concurrency ${concurrency}, ${os.cpus().length} CPUs, Postgres fsync on`);
  await run("one account", [`bench-one-${randomUUID()}`]);
  await run(
    `${accounts} accounts`,
    Array.from({ length: accounts }, () => `bench-many-${randomUUID()}`),
  );
} finally {
  await cleanup();
}

async function waitForBilling(client) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await client.getBalance({ accountId: "bench-probe" });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
