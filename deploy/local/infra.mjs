// Postgres and NATS JetStream from the machine's own binaries (no Docker), for the launcher and the
// test harness. Node built-ins only: this runs before `pnpm install`.
import { execFileSync, spawnSync } from "node:child_process";
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { sleep, spawnLabelled, stopChild, tailFile, waitForExit } from "./processes.mjs";

export * from "./processes.mjs";

const isRoot = () => process.getuid?.() === 0;
/** Progress messages go to a function, or to the `info` method of a logger object (pino-like). */
const asLog = (log) => {
  if (typeof log === "function") return log;
  if (log) return (message) => log.info(message);
  return (message) => console.log(message);
};

function isExecutable(file) {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function findOnPath(name) {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, name))) return path.join(dir, name);
  }
  return null;
}

const PG_TOOLS = ["initdb", "pg_ctl", "postgres"];

/** initdb, pg_ctl and postgres from one folder: PATH first, then Debian's per-version folders. */
export function findPostgresBin() {
  const candidates = (process.env.PATH ?? "").split(path.delimiter).filter(Boolean);
  // Debian keeps server binaries off PATH in /usr/lib/postgresql/<major>/bin; prefer the newest.
  const debian = "/usr/lib/postgresql";
  if (existsSync(debian)) {
    const majors = readdirSync(debian).filter((v) => /^\d+$/.test(v));
    majors.sort((a, b) => Number(b) - Number(a));
    candidates.push(...majors.map((v) => path.join(debian, v, "bin")));
  }
  for (const dir of candidates) {
    if (PG_TOOLS.every((tool) => isExecutable(path.join(dir, tool)))) {
      return Object.fromEntries([["dir", dir], ...PG_TOOLS.map((t) => [t, path.join(dir, t)])]);
    }
  }
  return null;
}

/** nats-server from PATH, or where Debian's package puts it (/usr/sbin is off a user's PATH). */
export function findNatsServer() {
  return findOnPath("nats-server") ?? (isExecutable("/usr/sbin/nats-server") ? "/usr/sbin/nats-server" : null);
}

/** A headless browser for the page tests: CHROMIUM_PATH, else Debian's chromium. */
export function findChromium() {
  if (process.env.CHROMIUM_PATH) return isExecutable(process.env.CHROMIUM_PATH) ? process.env.CHROMIUM_PATH : null;
  return findOnPath("chromium") ?? (isExecutable("/usr/bin/chromium") ? "/usr/bin/chromium" : null);
}

let aptUpdated = false;

/**
 * Find the Postgres and/or NATS binaries; install the Debian packages when allowed (root with
 * apt-get), otherwise fail with exactly what to install.
 */
export function ensureBinaries({ install = false, log: logTo, postgres = true, nats = true, browser = false } = {}) {
  const log = asLog(logTo);
  const find = () => ({
    postgres: postgres ? findPostgresBin() : null,
    natsServer: nats ? findNatsServer() : null,
    chromium: browser ? findChromium() : null,
  });
  let found = find();
  const missing = () => [
    ...(postgres && !found.postgres ? ["postgresql"] : []),
    ...(nats && !found.natsServer ? ["nats-server"] : []),
    ...(browser && !found.chromium ? ["chromium"] : []),
  ];
  if (missing().length === 0) return found;

  if (install && isRoot() && findOnPath("apt-get")) {
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    if (!aptUpdated) {
      log("apt-get update");
      execFileSync("apt-get", ["update"], { stdio: "inherit", env });
      aptUpdated = true;
    }
    log(`apt-get install -y ${missing().join(" ")}`);
    execFileSync("apt-get", ["install", "-y", ...missing()], { stdio: "inherit", env });
    found = find();
    if (missing().length === 0) return found;
  }
  const vars = [
    !found.postgres && postgres && "DATABASE_URL",
    !found.natsServer && nats && "NATS_URL",
    !found.chromium && browser && "CHROMIUM_PATH",
  ];
  throw new Error(
    `missing ${missing().join(" and ")} (looked on PATH, /usr/lib/postgresql/*/bin, /usr/sbin). ` +
      `Install with: sudo apt-get install ${missing().join(" ")}; ` +
      `or set ${vars.filter(Boolean).join(" / ")} to point at one you already have.`,
  );
}

// ---------------------------------------------------------------------------------------------
// Postgres

/** uid/gid of the `postgres` user when we are root (Postgres refuses to run as root), else null. */
function postgresUser() {
  if (!isRoot()) return null;
  try {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }));
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }));
    return { uid, gid };
  } catch {
    throw new Error(
      "running as root, but there is no `postgres` user to run Postgres as (apt-get install postgresql creates it)",
    );
  }
}

/** Run a Postgres tool synchronously (as `postgres` when root); throw with its output on failure. */
function runPgTool(file, args, user) {
  const res = spawnSync(file, args, { encoding: "utf8", ...(user ?? {}), env: { ...process.env, LC_ALL: "C" } });
  if (res.status !== 0) {
    const output = `${res.stdout ?? ""}${res.stderr ?? ""}${res.error?.message ?? ""}`.trim();
    throw new Error(`${path.basename(file)} ${args.join(" ")} failed:\n${output}`);
  }
}

/**
 * The `postgres` user must be able to walk down to the data folder; a temp folder from mkdtemp is
 * 0700 root. Add only the search (x) bit for others on each ancestor that lacks it.
 */
function makeTraversable(dir, log) {
  for (let d = path.dirname(dir); ; d = path.dirname(d)) {
    const { mode } = statSync(d);
    if ((mode & 0o001) === 0) {
      log(`chmod o+x ${d} (so the postgres user can reach its data folder)`);
      chmodSync(d, mode | 0o001);
    }
    if (d === path.dirname(d)) break;
  }
}

/** Whether pid is a live process; a zombie (exited, not yet reaped by init) counts as dead. */
function isAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if (err.code !== "EPERM") return false;
  }
  try {
    // The state letter follows "(comm)" in /proc/<pid>/stat.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

/**
 * Whether a Postgres lock file (postmaster.pid, or the socket's .s.PGSQL.<port>.lock) is stale and
 * must go. Postgres ignores a lock whose pid is gone, but refuses when that pid is a zombie (an
 * init that reaps late, common in containers) or was reused by another program. Returns the pid of
 * a live postgres that holds the lock, or null.
 */
function clearStaleLock(lockFile, log) {
  if (!existsSync(lockFile)) return null;
  const pid = Number(readFileSync(lockFile, "utf8").split("\n")[0]);
  if (!pid) return null;
  let comm = null;
  try {
    comm = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    // gone, or no /proc: Postgres judges its own lock
  }
  if (comm === null) return isAlive(pid) ? pid : null;
  if (isAlive(pid) && (comm === "postgres" || comm === "postmaster")) return pid;
  log(`removing stale ${lockFile} (pid ${pid} is no longer a running Postgres)`);
  unlinkSync(lockFile);
  return null;
}

/** Clear stale locks; a live postgres on this folder is most likely one a launcher failed to stop. */
function handleLockFiles(dataDir, socketDir, port, pgCtl, log) {
  const pid = clearStaleLock(path.join(dataDir, "postmaster.pid"), log);
  if (pid === null) {
    clearStaleLock(path.join(socketDir, `.s.PGSQL.${port}.lock`), log);
    return;
  }
  const stop = `${isRoot() ? "runuser -u postgres -- " : ""}${pgCtl} stop -D ${dataDir} -m fast`;
  throw new Error(`a Postgres from an earlier run is still running on ${dataDir} (pid ${pid}); stop it with: ${stop}`);
}

/** pg_ctl's own readiness test: postmaster.pid names our pid and its status line says "ready". */
function pgReady(dataDir, pid) {
  try {
    const lines = readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n");
    return Number(lines[0]) === pid && lines[7]?.trim() === "ready";
  } catch {
    return false;
  }
}

/**
 * Start Postgres on 127.0.0.1:port with its cluster in dataDir (created on first use: superuser
 * `toolport`, trust auth, UTF8; reused later). `fast` trades durability for speed (tests only).
 * `settings` are server settings for this start (`{ max_connections: 300 }`). Output goes to logFile
 * (default `<dataDir>.log`).
 */
export async function startPostgres({
  dataDir,
  port,
  log: logTo,
  fast = false,
  logFile,
  bins,
  timeoutMs = 30_000,
  settings = {},
}) {
  const log = asLog(logTo);
  bins ??= findPostgresBin() ?? ensureBinaries({ nats: false, log }).postgres;
  dataDir = path.resolve(dataDir);
  logFile ??= `${dataDir}.log`;
  const user = postgresUser();
  mkdirSync(dataDir, { recursive: true });
  if (user) {
    makeTraversable(dataDir, log);
    chownSync(dataDir, user.uid, user.gid);
  }

  if (!existsSync(path.join(dataDir, "PG_VERSION"))) {
    if (readdirSync(dataDir).length > 0) throw new Error(`${dataDir} is neither empty nor a Postgres cluster`);
    log(`initdb ${dataDir}`);
    runPgTool(
      bins.initdb,
      ["-D", dataDir, "-U", "toolport", "-E", "UTF8", "--no-locale", "-A", "trust", "--no-instructions"],
      user,
    );
    // Only the socket (in a folder only we can reach) and 127.0.0.1, both without a password.
    const hba = path.join(dataDir, "pg_hba.conf");
    writeFileSync(hba, "local all all trust\nhost all all 127.0.0.1/32 trust\n", { mode: 0o600 });
    if (user) chownSync(hba, user.uid, user.gid);
  }

  // Unix socket paths are capped at 107 bytes; fall back to a short temp folder for deep paths.
  let socketDir = dataDir;
  let tempSocketDir = false;
  if (`${dataDir}/.s.PGSQL.${port}.lock`.length > 100) {
    socketDir = mkdtempSync(path.join(os.tmpdir(), "toolport-pg-"));
    tempSocketDir = true;
    if (user) chownSync(socketDir, user.uid, user.gid);
  }
  handleLockFiles(dataDir, socketDir, port, bins.pg_ctl, log);

  const args = ["-D", dataDir, "-p", String(port), "-k", socketDir, "-c", "listen_addresses=127.0.0.1"];
  if (fast) args.push("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off");
  for (const [name, value] of Object.entries(settings)) args.push("-c", `${name}=${value}`);
  // Spawned straight under the postgres uid rather than through `runuser`: runuser keeps a parent
  // process that turns our SIGTERM into a SIGKILL after 2 s; this way the pid we hold is the
  // postmaster itself.
  const child = spawnLabelled("postgres", bins.postgres, args, { logFile, echo: false, ...(user ?? {}) });

  const deadline = Date.now() + timeoutMs;
  while (!pgReady(dataDir, child.pid)) {
    const exited = await waitForExit(child, 100);
    if (exited) {
      await sleep(50); // let the log stream flush
      throw new Error(`Postgres exited while starting (code ${exited.code}); ${logFile}:\n${tailFile(logFile)}`);
    }
    if (Date.now() > deadline) {
      await stopChild(child, { signal: "SIGINT" });
      throw new Error(`Postgres not ready after ${timeoutMs / 1000}s; see ${logFile}`);
    }
  }

  return {
    url: `postgres://toolport@127.0.0.1:${port}/postgres`,
    pid: child.pid,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        try {
          runPgTool(bins.pg_ctl, ["stop", "-D", dataDir, "-m", "fast", "-w", "-t", "30"], user);
        } catch (err) {
          log(`pg_ctl stop failed, signalling Postgres directly: ${err.message}`);
        }
        // SIGINT is Postgres' fast shutdown, in case pg_ctl could not do it.
        await stopChild(child, { signal: "SIGINT", timeoutMs: 30_000 });
      }
      if (tempSocketDir) rmSync(socketDir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// NATS

/** Connect and read the server's INFO line (the first thing a NATS server sends). */
function readNatsInfo(port) {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    let data = "";
    socket.setTimeout(1_000, () => socket.destroy(new Error("no INFO within 1s")));
    socket.on("error", reject);
    socket.on("data", (chunk) => {
      data += chunk;
      const end = data.indexOf("\r\n");
      if (end < 0) return;
      socket.destroy();
      const line = data.slice(0, end);
      if (!line.startsWith("INFO ")) return reject(new Error(`unexpected greeting: ${line}`));
      resolve(JSON.parse(line.slice(5)));
    });
  });
}

/**
 * Start nats-server with JetStream on 127.0.0.1:port, storing streams under storeDir (reused on
 * later starts). An HTTP monitor listens only when monitorPort is given. Output goes to logFile
 * (default `<storeDir>.log`).
 */
export async function startNats({ storeDir, port, log: logTo, monitorPort, logFile, natsServer, timeoutMs = 15_000 }) {
  const log = asLog(logTo);
  natsServer ??= findNatsServer() ?? ensureBinaries({ postgres: false, log }).natsServer;
  storeDir = path.resolve(storeDir);
  logFile ??= `${storeDir}.log`;
  mkdirSync(storeDir, { recursive: true });
  const args = ["-js", "-sd", storeDir, "-p", String(port), "-a", "127.0.0.1"];
  if (monitorPort) args.push("-m", String(monitorPort));
  const child = spawnLabelled("nats", natsServer, args, { logFile, echo: false });

  const deadline = Date.now() + timeoutMs;
  while (true) {
    const exited = await waitForExit(child, 100);
    if (exited) {
      await sleep(50);
      throw new Error(`nats-server exited while starting (code ${exited.code}); ${logFile}:\n${tailFile(logFile)}`);
    }
    const info = await readNatsInfo(port).catch(() => null);
    if (info?.jetstream === true) break;
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error(`nats-server not ready (JetStream) after ${timeoutMs / 1000}s; see ${logFile}`);
    }
  }

  return {
    url: `nats://127.0.0.1:${port}`,
    pid: child.pid,
    async stop() {
      await stopChild(child, { signal: "SIGTERM", timeoutMs: 10_000 });
    },
  };
}
