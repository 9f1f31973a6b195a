/**
 * NATS credentials beyond the URL, and the stream's settings, against a real nats-server this file starts:
 * TLS with a CA of the test's own (openssl) and a user known only by its NKey (no password, no token).
 * The services connect as startService does (connectNats with NATS_NKEY_SEED_FILE / NATS_CREDS_FILE and
 * NATS_CA_FILE, files as a mounted Secret gives them); the stream takes NATS_STREAM_REPLICAS,
 * NATS_STREAM_MAX_AGE_S and NATS_STREAM_MAX_BYTES when created, and again when they change. (Replicas
 * above 1 need a NATS cluster; a single server, as here, takes only 1.)
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { connect, type NatsConnection, nkeys } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../../../deploy/local/infra.mjs";
import { until } from "../../../../test/harness/wait.js";
import { loadConfig } from "../src/config.js";
import { connectNats, ensureStream, natsAuthOptions, natsNames, setNatsNamespace } from "../src/events.js";
import { createLogger } from "../src/logger.js";
import { type BaseConfig, serviceEnv } from "../src/service.js";

const log = createLogger("nats-auth-test", "silent");

/** A service's settings as startService reads them (the kit's own variables). */
const kitConfig = (env: NodeJS.ProcessEnv) => loadConfig(serviceEnv("kit", 1), env) as unknown as BaseConfig;

/** A CA and a server certificate for 127.0.0.1 signed by it, made with openssl in `dir`. */
function makeCertificates(dir: string): { ca: string; cert: string; key: string; otherCa: string } {
  const file = (name: string) => path.join(dir, name);
  const ssl = (...args: string[]) => execFileSync("openssl", args, { stdio: "pipe" });
  for (const ca of ["ca", "other-ca"]) {
    ssl(
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-days",
      "1",
      "-subj",
      `/CN=toolport test ${ca}`,
      "-keyout",
      file(`${ca}.key`),
      "-out",
      file(`${ca}.pem`),
    );
  }
  ssl(
    "req",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:P-256",
    "-nodes",
    "-subj",
    "/CN=127.0.0.1",
    "-keyout",
    file("server.key"),
    "-out",
    file("server.csr"),
  );
  writeFileSync(file("server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  ssl(
    "x509",
    "-req",
    "-in",
    file("server.csr"),
    "-CA",
    file("ca.pem"),
    "-CAkey",
    file("ca.key"),
    "-CAcreateserial",
    "-days",
    "1",
    "-extfile",
    file("server.ext"),
    "-out",
    file("server.pem"),
  );
  return { ca: file("ca.pem"), cert: file("server.pem"), key: file("server.key"), otherCa: file("other-ca.pem") };
}

describe("NATS credentials by file (NKey seed, creds) and a custom CA, against nats-server with TLS and an NKey user", () => {
  let dir: string;
  let server: ChildProcess;
  let url: string;
  let certs: ReturnType<typeof makeCertificates>;
  let seedFile: string;
  let credsFile: string;
  let strangerSeedFile: string;
  const opened: NatsConnection[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "toolport-nats-auth-"));
    certs = makeCertificates(dir);
    const user = nkeys.createUser();
    const stranger = nkeys.createUser();
    seedFile = path.join(dir, "user.nk");
    // As a Secret key mounted as a file often is: with a trailing newline.
    writeFileSync(seedFile, `${new TextDecoder().decode(user.getSeed())}\n`, { mode: 0o600 });
    strangerSeedFile = path.join(dir, "stranger.nk");
    writeFileSync(strangerSeedFile, new TextDecoder().decode(stranger.getSeed()), { mode: 0o600 });
    // A creds file as nsc writes it. This server trusts NKey users, not an operator, so it checks the
    // signature made with the seed below and does not look at the JWT; what is tested is that the file is
    // read and its seed signs the server's nonce.
    credsFile = path.join(dir, "user.creds");
    writeFileSync(
      credsFile,
      [
        "-----BEGIN NATS USER JWT-----",
        "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.e30.c2ln",
        "------END NATS USER JWT------",
        "",
        "************************* IMPORTANT *************************",
        "NKEY Seed printed below can be used to sign and prove identity.",
        "",
        "-----BEGIN USER NKEY SEED-----",
        new TextDecoder().decode(user.getSeed()),
        "------END USER NKEY SEED------",
        "",
      ].join("\n"),
      { mode: 0o600 },
    );

    const port = await freePort();
    const config = path.join(dir, "nats.conf");
    writeFileSync(
      config,
      [
        `listen: 127.0.0.1:${port}`,
        `jetstream { store_dir: ${JSON.stringify(path.join(dir, "js"))} }`,
        `tls { cert_file: ${JSON.stringify(certs.cert)}, key_file: ${JSON.stringify(certs.key)} }`,
        `authorization { users: [ { nkey: ${user.getPublicKey()} } ] }`,
      ].join("\n"),
    );
    server = spawn("nats-server", ["-c", config, "-l", path.join(dir, "nats.log")], { stdio: "ignore" });
    url = `nats://127.0.0.1:${port}`;
    let lastError: Error | undefined;
    await until("nats-server with TLS to accept the NKey user", async () => {
      try {
        const nc = await connect({ servers: url, ...natsAuthOptions({ nkeySeedFile: seedFile, caFile: certs.ca }) });
        await nc.close();
        return true;
      } catch (err) {
        lastError = err as Error;
        return false;
      }
    }).catch((err) => {
      throw new Error(`${(err as Error).message}: ${lastError?.message}; ${readFileSync(path.join(dir, "nats.log"), "utf8")}`);
    });
  }, 60_000);

  afterAll(async () => {
    for (const nc of opened) await nc.close().catch(() => {});
    server?.kill("SIGTERM");
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** One attempt, no retries (connectNats itself waits for a server as long as it takes). */
  const once = (options: Parameters<typeof natsAuthOptions>[0]) =>
    connect({ servers: url, ...natsAuthOptions(options), maxReconnectAttempts: 0, reconnect: false, timeout: 5_000 });

  it("connects with the NKey seed file and the CA file, as a service start does, and with a creds file", async () => {
    const nc = await connectNats(url, "nats-auth-test", log, { nkeySeedFile: seedFile, caFile: certs.ca });
    opened.push(nc);
    expect(nc.info?.tls_required).toBe(true);
    expect(await nc.rtt()).toBeGreaterThanOrEqual(0);
    const withCreds = await once({ credsFile, caFile: certs.ca });
    await withCreds.close();
  });

  it("is refused without credentials, with another user's seed, and without the CA that signed the server", async () => {
    await expect(once({ caFile: certs.ca })).rejects.toThrow(/AUTHORIZATION_VIOLATION|Authorization Violation/i);
    await expect(once({ nkeySeedFile: strangerSeedFile, caFile: certs.ca })).rejects.toThrow(
      /AUTHORIZATION_VIOLATION|Authorization Violation/i,
    );
    await expect(once({ nkeySeedFile: seedFile, caFile: certs.otherCa })).rejects.toThrow();
    await expect(once({ nkeySeedFile: seedFile })).rejects.toThrow();
    expect(() => natsAuthOptions({ credsFile, nkeySeedFile: seedFile })).toThrow(/not both/);
  });

  it("creates the stream with the configured replicas, max age and max bytes, and applies changed ones", async () => {
    const nc = await connectNats(url, "nats-auth-stream", log, { nkeySeedFile: seedFile, caFile: certs.ca });
    opened.push(nc);
    const config = kitConfig({
      NATS_NAMESPACE: "authtest",
      NATS_STREAM_REPLICAS: "1",
      NATS_STREAM_MAX_AGE_S: "604800",
      NATS_STREAM_MAX_BYTES: "1073741824",
    });
    setNatsNamespace(config.NATS_NAMESPACE);
    try {
      await ensureStream(nc, {
        replicas: config.NATS_STREAM_REPLICAS,
        maxAgeSeconds: config.NATS_STREAM_MAX_AGE_S,
        maxBytes: config.NATS_STREAM_MAX_BYTES,
      });
      const jsm = await nc.jetstreamManager();
      const first = (await jsm.streams.info(natsNames("authtest").stream)).config;
      expect(first.num_replicas).toBe(1);
      expect(first.max_age).toBe(604_800 * 1_000_000_000);
      expect(first.max_bytes).toBe(1_073_741_824);
      expect(first.subjects).toEqual(["authtest.toolport.>"]);

      await ensureStream(nc, { replicas: 1, maxAgeSeconds: 3600, maxBytes: 1_048_576 });
      const second = (await jsm.streams.info(natsNames("authtest").stream)).config;
      expect(second.max_age).toBe(3600 * 1_000_000_000);
      expect(second.max_bytes).toBe(1_048_576);
      expect(second.duplicate_window).toBe(first.duplicate_window);
    } finally {
      setNatsNamespace("");
    }
  });

  it("reads the settings with their defaults unchanged (one copy, no limits) and refuses bad values", () => {
    const defaults = kitConfig({});
    expect(defaults.NATS_STREAM_REPLICAS).toBe(1);
    expect(defaults.NATS_STREAM_MAX_AGE_S).toBe(0);
    expect(defaults.NATS_STREAM_MAX_BYTES).toBe(-1);
    expect(defaults.NATS_CREDS_FILE).toBeUndefined();
    expect(() => kitConfig({ NATS_STREAM_REPLICAS: "7" })).toThrow(/NATS_STREAM_REPLICAS/);
    expect(() => kitConfig({ NATS_STREAM_MAX_AGE_S: "-1" })).toThrow(/NATS_STREAM_MAX_AGE_S/);
    expect(() => kitConfig({ NATS_STREAM_MAX_AGE_S: "1e12" })).toThrow(/NATS_STREAM_MAX_AGE_S/);
    expect(() => kitConfig({ NATS_STREAM_MAX_BYTES: "lots" })).toThrow(/NATS_STREAM_MAX_BYTES/);
  });
});
