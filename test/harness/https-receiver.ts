/**
 * Real HTTPS receivers for tests of code that calls out over TLS (webhooks): a server on 127.0.0.1 with
 * a certificate signed by a throwaway test CA, which records every request and answers as the test says.
 *
 * Trust: the process under test is started with `NODE_EXTRA_CA_CERTS=<caFile>` (from `testCertificates()`),
 * so Node's TLS accepts the receivers without turning verification off. Node reads that variable once at
 * startup, so the CA is one per test process: every receiver's certificate is signed by it, whatever
 * extra names it was made for.
 *
 * The certificates come from the `openssl` binary (EC P-256) in a temporary folder that is removed when the
 * process exits (or, when it was killed, by a later process: see sweepStale); the CA is made once per process
 * and a leaf once per set of names (both cached).
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import https from "node:https";
import { isIP, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

/** The test CA (`caFile`, the PEM to give as NODE_EXTRA_CA_CERTS, and its text) and a server certificate and key it signed. */
export interface TestCa {
  caFile: string;
  caPem: string;
  cert: string;
  key: string;
}

/** One request as the receiver got it; `body` is the raw bytes, `receivedAt` is Date.now() once the body was read. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  receivedAt: number;
}

/** How to answer one request: after `delayMs` (if any), either the status, body and headers, or, with `hangUp`, destroy the socket without answering. */
export interface Reply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  delayMs?: number;
  /** Destroy the socket without answering. */
  hangUp?: boolean;
}

export interface Receiver {
  /** https://127.0.0.1:<port>, no trailing slash. */
  url: string;
  port: number;
  /** Every request, in arrival order (recorded before it is answered). */
  requests: ReceivedRequest[];
  /** Decide the reply per request (default: 200 "ok"); may be changed at any time. A throwing `fn` answers 500. */
  respond(fn: (req: ReceivedRequest, index: number) => Reply | Promise<Reply>): void;
  /**
   * Resolves with a snapshot of `requests` once `requests.length >= n`, or rejects after timeoutMs
   * (default 10 s), or at close(), with a message naming the count expected and received.
   */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Closes the server, destroys open sockets and cancels delayed replies (so a test can end while one is pending). */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------
// Certificates

interface CaState {
  dir: string;
  caFile: string;
  caKeyFile: string;
  caPem: string;
  leaves: Map<string, Promise<TestCa>>;
}

// Kept on globalThis so that it is one per process even when the test runner loads this module afresh per file.
const cacheKey = Symbol.for("toolport.test.https-receiver.ca");
type CacheHolder = { [cacheKey]?: Promise<CaState> };

const DNS_NAME = /^(?=.{1,253}$)(\*\.)?[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*$/i;

function openssl(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile("openssl", args, { cwd, timeout: 30_000 }, (err, _stdout, stderr) => {
      if (err) reject(new Error(`openssl ${args[0]} failed: ${err.message}\n${stderr}`));
      else resolve();
    });
  });
}

function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f; // positive
  return "0x" + bytes.toString("hex");
}

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

const DIR_PREFIX = "toolport-test-ca-";

/**
 * Removes the folders of processes that are gone and did not clean up (test runners' workers are often
 * killed, so no "exit" event): the folder names carry the pid. Only folders older than an hour, in case the
 * temporary folder is shared with processes this one cannot see.
 */
function sweepStale(): void {
  const root = tmpdir();
  for (const entry of readdirSync(root)) {
    const pid = Number(/^toolport-test-ca-(\d+)-/.exec(entry)?.[1]);
    if (!pid || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
      continue; // still running
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ESRCH") continue;
    }
    try {
      const dir = path.join(root, entry);
      if (Date.now() - statSync(dir).mtimeMs > 3_600_000) rmSync(dir, { recursive: true, force: true });
    } catch {}
  }
}

async function makeCa(): Promise<CaState> {
  try {
    sweepStale();
  } catch {}
  const dir = mkdtempSync(path.join(tmpdir(), `${DIR_PREFIX}${process.pid}-`));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, "ca.cnf");
  // A config of our own, so that nothing depends on the system's openssl.cnf.
  writeFileSync(
    config,
    [
      "[req]",
      "distinguished_name = dn",
      "prompt = no",
      "[dn]",
      "CN = toolport test CA",
      "[ca_ext]",
      "basicConstraints = critical,CA:TRUE",
      "keyUsage = critical,keyCertSign,cRLSign",
      "subjectKeyIdentifier = hash",
      "",
    ].join("\n"),
  );
  const caFile = path.join(dir, "ca.pem");
  const caKeyFile = path.join(dir, "ca.key");
  await openssl(
    ["req", "-x509", "-config", config, ...EC_KEY, "-keyout", caKeyFile, "-out", caFile, "-sha256", "-days", "7"].concat([
      "-extensions",
      "ca_ext",
      "-set_serial",
      serial(),
    ]),
    dir,
  );
  return { dir, caFile, caKeyFile, caPem: readFileSync(caFile, "utf8"), leaves: new Map() };
}

async function makeLeaf(ca: CaState, names: string[], n: number): Promise<TestCa> {
  const base = path.join(ca.dir, `leaf-${n}`);
  const alt = names.map((name, i) => (isIP(name) ? `IP.${i + 1} = ${name}` : `DNS.${i + 1} = ${name}`));
  writeFileSync(
    `${base}.cnf`,
    [
      "[req]",
      "distinguished_name = dn",
      "prompt = no",
      "[dn]",
      "CN = toolport test receiver",
      "[leaf_ext]",
      "basicConstraints = critical,CA:FALSE",
      "keyUsage = critical,digitalSignature,keyEncipherment",
      "extendedKeyUsage = serverAuth",
      "subjectKeyIdentifier = hash",
      "authorityKeyIdentifier = keyid,issuer",
      "subjectAltName = @alt",
      "[alt]",
      ...alt,
      "",
    ].join("\n"),
  );
  await openssl(["req", "-new", "-config", `${base}.cnf`, ...EC_KEY, "-keyout", `${base}.key`, "-out", `${base}.csr`], ca.dir);
  await openssl(
    ["x509", "-req", "-in", `${base}.csr`, "-CA", ca.caFile, "-CAkey", ca.caKeyFile, "-set_serial", serial(), "-sha256"].concat([
      "-days",
      "3",
      "-extfile",
      `${base}.cnf`,
      "-extensions",
      "leaf_ext",
      "-out",
      `${base}.pem`,
    ]),
    ca.dir,
  );
  return {
    caFile: ca.caFile,
    caPem: ca.caPem,
    cert: readFileSync(`${base}.pem`, "utf8"),
    key: readFileSync(`${base}.key`, "utf8"),
  };
}

/**
 * The process's test CA and a server certificate signed by it, valid for IP 127.0.0.1, `localhost` and
 * `extraNames` (DNS names, or IP addresses), for 3 days. Cached: the CA once per process, the certificate
 * once per set of names; `caFile` is the same for every call.
 */
export function testCertificates(extraNames: string[] = []): Promise<TestCa> {
  const names = ["127.0.0.1", "localhost"];
  for (const raw of extraNames) {
    const name = raw.toLowerCase();
    if (!isIP(name) && !DNS_NAME.test(name)) return Promise.reject(new Error(`testCertificates: not a DNS name or IP: ${raw}`));
    if (!names.includes(name)) names.push(name);
  }
  const holder = globalThis as CacheHolder;
  if (!holder[cacheKey]) {
    holder[cacheKey] = makeCa();
    holder[cacheKey].catch(() => delete holder[cacheKey]); // a failure is not cached
  }
  const key = names.slice(2).sort().join(",");
  return holder[cacheKey].then((ca) => {
    let leaf = ca.leaves.get(key);
    if (!leaf) {
      leaf = makeLeaf(ca, names, ca.leaves.size);
      ca.leaves.set(key, leaf);
      leaf.catch(() => ca.leaves.delete(key));
    }
    return leaf;
  });
}

// ---------------------------------------------------------------------------------------------------------
// Receiver

const defaultReply = (): Reply => ({ status: 200, body: "ok" });

/**
 * Starts an HTTPS server on 127.0.0.1 (`port`, or a free one) with a certificate from
 * `testCertificates(extraNames)`. HTTP keep-alive is on; replies carry Content-Length (and
 * `content-type: text/plain` unless the reply names one).
 */
export async function startHttpsReceiver(options: { extraNames?: string[]; port?: number } = {}): Promise<Receiver> {
  const { cert, key } = await testCertificates(options.extraNames);
  const requests: ReceivedRequest[] = [];
  let responder: (req: ReceivedRequest, index: number) => Reply | Promise<Reply> = defaultReply;
  let closed = false;
  let closing: Promise<void> | undefined;
  const sockets = new Set<Socket>();
  const cancels = new Set<() => void>();
  const waiters = new Set<{ n: number; resolve: () => void; fail: (why: string) => void }>();

  /** Resolves true after `ms`, or false at once when the receiver closes first. */
  function sleep(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const cancel = () => {
        clearTimeout(timer);
        cancels.delete(cancel);
        resolve(false);
      };
      const timer = setTimeout(() => {
        cancels.delete(cancel);
        resolve(true);
      }, ms);
      cancels.add(cancel);
    });
  }

  const server = https.createServer({ cert, key, keepAlive: true }, async (req, res) => {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      return; // the client went away before the body was complete
    }
    const received: ReceivedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: { ...req.headers },
      body: Buffer.concat(chunks),
      receivedAt: Date.now(),
    };
    const index = requests.push(received) - 1;
    for (const w of waiters) if (requests.length >= w.n) w.resolve();

    let reply: Reply;
    try {
      reply = await responder(received, index);
    } catch (err) {
      reply = { status: 500, body: `https-receiver: respond() threw: ${err instanceof Error ? err.message : String(err)}` };
    }
    if (reply.delayMs && reply.delayMs > 0 && !(await sleep(reply.delayMs))) return;
    if (closed) return;
    if (reply.hangUp) {
      req.socket.destroy();
      return;
    }
    const body = Buffer.from(reply.body ?? "", "utf8");
    const headers: Record<string, string | number> = {};
    for (const [name, value] of Object.entries(reply.headers ?? {})) {
      if (name.toLowerCase() !== "content-length") headers[name] = value;
    }
    if (!Object.keys(headers).some((name) => name.toLowerCase() === "content-type")) {
      headers["content-type"] = "text/plain; charset=utf-8";
    }
    headers["content-length"] = body.length;
    res.writeHead(reply.status, headers);
    res.end(body);
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("https-receiver: no TCP address");
  const port = address.port;

  return {
    url: `https://127.0.0.1:${port}`,
    port,
    requests,
    respond(fn) {
      responder = fn;
    },
    waitFor(n, timeoutMs = 10_000) {
      if (requests.length >= n) return Promise.resolve(requests.slice());
      if (closed)
        return Promise.reject(new Error(`waitFor(${n}): the receiver is closed, ${requests.length} request(s) received`));
      return new Promise((resolve, reject) => {
        const waiter = {
          n,
          resolve: () => {
            clearTimeout(timer);
            waiters.delete(waiter);
            resolve(requests.slice());
          },
          fail: (why: string) => {
            clearTimeout(timer);
            waiters.delete(waiter);
            reject(new Error(`waitFor(${n}): ${why}, ${requests.length} request(s) received of ${n} expected`));
          },
        };
        const timer = setTimeout(() => waiter.fail(`timed out after ${timeoutMs} ms`), timeoutMs);
        waiters.add(waiter);
      });
    },
    close() {
      if (!closing) {
        closed = true;
        for (const cancel of [...cancels]) cancel();
        for (const w of [...waiters]) w.fail("the receiver closed");
        closing = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of sockets) socket.destroy();
      }
      return closing;
    },
  };
}
