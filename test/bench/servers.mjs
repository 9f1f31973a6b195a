// Postgres and NATS servers for the benchmarks, started from the machine's binaries (deploy/local/infra.mjs)
// in the bench's temporary folder, on free ports, tracked for CPU under their names, and stopped together by
// stopServers (call it whatever happened, so that none is left behind); and the JSON request a bench's
// set-up makes, which must succeed.
import { appendFileSync, rmSync } from "node:fs";
import path from "node:path";
import { freePort, startNats, startPostgres } from "../../deploy/local/infra.mjs";
import { agent, cleanup, request, track } from "./lib.mjs";

const quiet = { info() {}, warn() {}, error: console.error };
const servers = [];

/**
 * A Postgres server named `name` (the CPU tables use the name) with max_connections raised to 300 (the
 * pools of a whole stack in one process): started once to create the cluster, then again with the
 * setting. `fast`: fsync, synchronous_commit and full_page_writes off; otherwise production durability.
 * `settings`: more server settings (`-c name=value`), e.g. shared_preload_libraries.
 */
export async function benchPostgres(dir, name, { fast = false, settings = {} } = {}) {
  const dataDir = path.join(dir, name);
  const port = await freePort();
  const first = await startPostgres({ dataDir, port, log: quiet, fast });
  await first.stop();
  appendFileSync(path.join(dataDir, "postgresql.conf"), "\nmax_connections = 300\n");
  const pg = await startPostgres({ dataDir, port, log: quiet, fast, settings });
  servers.push(pg);
  track(name, pg.pid, { tree: true });
  return { ...pg, name };
}

/** A NATS server with JetStream named `name`. */
export async function benchNats(dir, name) {
  const nats = await startNats({ storeDir: path.join(dir, name), port: await freePort(), log: quiet });
  servers.push(nats);
  track(name, nats.pid);
  return { ...nats, name };
}

/** Stops every server started here, the last started first. */
export async function stopServers() {
  for (const server of servers.splice(0).reverse()) await server.stop().catch(() => {});
}

/** A request that must answer 200 (or 201); its body as JSON. */
export async function expectJson(what, url, options) {
  const res = await request(url, options);
  if (res.status !== 200 && res.status !== 201) throw new Error(`${what}: HTTP ${res.status} ${res.body.slice(0, 500)}`);
  return JSON.parse(res.body);
}

/**
 * The bench's clean-up, run once whatever happens (its end, an error, Ctrl-C or SIGTERM): `before` (stopping
 * what the bench itself started, e.g. Toolport), the children lib.mjs started, the servers, the temporary
 * folder, the keep-alive agent. `started()` says whether it has begun (a bench falls silent then).
 */
export function teardown(dir, before = async () => {}) {
  let stopping;
  const shutdown = () => {
    stopping ??= (async () => {
      await before().catch(() => {});
      await cleanup();
      await stopServers();
      rmSync(dir, { recursive: true, force: true });
      agent.destroy();
    })();
    return stopping;
  };
  for (const signal of ["SIGINT", "SIGTERM"])
    process.once(signal, () => {
      console.error(`\n${signal}: cleaning up`);
      shutdown().finally(() => process.exit(130));
    });
  return { shutdown, started: () => stopping !== undefined };
}
