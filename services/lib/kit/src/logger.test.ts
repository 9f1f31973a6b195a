/**
 * The logger's redaction: secret keys censored at the three levels it covers (the line's keys, theirs,
 * theirs), in arrays, in a logged Error and in a child's bindings, the caller's objects left as they were,
 * and, for any JSON-like object, the same text as the pino `redact` paths the logger used before issue 36
 * (65 paths, `*.key` and `*.*.key` wildcards for each key name), so nothing caught then is missed now.
 * And where a logger without a destination writes: stdout, before the log call returns.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { runInScope } from "./context.js";
import { createLogger } from "./logger.js";

const secretKeys = [
  "password",
  "api_key",
  "apiKey",
  "key",
  "secret",
  "token",
  "authorization",
  "svc-api-key",
  "cookie",
  "credential",
  "credentials",
  "private_key",
  "signing_secret",
];

/** A destination that keeps every line written. */
function lines() {
  const written: string[] = [];
  return { written, write: (line: string) => void written.push(line) };
}

function logged(write: (log: ReturnType<typeof createLogger>) => void): Record<string, unknown> {
  const out = lines();
  write(createLogger("test", "info", out));
  expect(out.written).toHaveLength(1);
  return JSON.parse(out.written[0]!);
}

describe("createLogger", () => {
  it("writes an access line as given, with the service, level, time and the request id in scope", () => {
    const line = runInScope({ requestId: "req-42" }, () =>
      logged((log) => log.info({ method: "POST", path: "/v1/tools/call/t1", status: 200, ms: 3 }, "request")),
    );
    expect(line).toMatchObject({
      level: "info",
      service: "test",
      request_id: "req-42",
      method: "POST",
      path: "/v1/tools/call/t1",
      status: 200,
      ms: 3,
      msg: "request",
    });
    expect(typeof line.time).toBe("string");
  });

  it("censors every secret key name at the line's level, one and two below, in arrays too", () => {
    for (const k of secretKeys) {
      const line = logged((log) =>
        log.warn(
          {
            [k]: "s1",
            headers: { [k]: "s2", accept: "*/*" },
            req: { headers: { [k]: "s3" }, method: "GET" },
            list: [{ [k]: "s4" }, "plain"],
            obj: { [k]: { nested: "s5" } },
          },
          "upstream refused",
        ),
      );
      expect(line, k).toMatchObject({
        [k]: "[REDACTED]",
        headers: { [k]: "[REDACTED]", accept: "*/*" },
        req: { headers: { [k]: "[REDACTED]" }, method: "GET" },
        list: [{ [k]: "[REDACTED]" }, "plain"],
        obj: { [k]: "[REDACTED]" },
      });
      expect(JSON.stringify(line), k).not.toMatch(/"s[1-5]"/);
    }
  });

  it("leaves the caller's objects as they were", () => {
    const fields = { headers: { authorization: "Bearer abc" }, list: [{ token: "t" }] };
    const before = structuredClone(fields);
    const line = logged((log) => log.info(fields, "x"));
    expect(line.headers).toEqual({ authorization: "[REDACTED]" });
    expect(fields).toEqual(before);
  });

  it("censors a logged Error's secret properties and keeps its type, message and stack", () => {
    const err = Object.assign(new TypeError("upstream said no"), {
      code: "E_UPSTREAM",
      token: "tok-secret",
      config: { url: "http://upstream.example", password: "pw-secret" },
    });
    for (const line of [logged((log) => log.error({ err, rpc: "CallTool" }, "rpc failed")), logged((log) => log.error(err))]) {
      const e = line.err as Record<string, unknown>;
      expect(e).toMatchObject({ type: "TypeError", message: "upstream said no", code: "E_UPSTREAM", token: "[REDACTED]" });
      expect(e.config).toEqual({ url: "http://upstream.example", password: "[REDACTED]" });
      expect(String(e.stack)).toContain("upstream said no");
      expect(JSON.stringify(line)).not.toMatch(/tok-secret|pw-secret/);
    }
    // The Error itself is not changed.
    expect(err.token).toBe("tok-secret");
  });

  it("censors a child logger's bindings", () => {
    const out = lines();
    createLogger("test", "info", out).child({ part: "watcher", token: "bound-secret" }).info("hello");
    expect(out.written[0]).not.toContain("bound-secret");
    expect(JSON.parse(out.written[0]!)).toMatchObject({ part: "watcher", token: "[REDACTED]", msg: "hello" });
    createLogger("test", "info", out)
      .child({ part: "queue" })
      .child({ job: { cookie: "grand-secret" } })
      .info("job");
    expect(out.written[1]).not.toContain("grand-secret");
    expect(JSON.parse(out.written[1]!)).toMatchObject({ part: "queue", job: { cookie: "[REDACTED]" } });
  });

  it("writes the same text as the pino redact paths it replaced, for any JSON-like line", () => {
    const paths = secretKeys.flatMap((k) => [`${k}`, `*.${k}`, `*.*.${k}`, `headers["${k}"]`, `req.headers["${k}"]`]);
    const key = fc.oneof(fc.constantFrom(...secretKeys, "headers", "req", "err", "msg2", "list"), fc.string({ maxLength: 6 }));
    const leaf = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null));
    const { tree } = fc.letrec((tie) => ({
      tree: fc.oneof({ depthSize: "small", withCrossShrink: true }, leaf, tie("object"), tie("array")),
      object: fc.dictionary(key, tie("tree"), { maxKeys: 5 }),
      array: fc.array(tie("tree"), { maxLength: 3 }),
    }));
    // `err` is left out at the top: the old redaction ran after pino's Error serializer, which a plain
    // object with a string `message` would go through too; the Error case is the test above.
    const line = fc.dictionary(key, tree, { maxKeys: 6 }).map((o) => {
      const { err: _err, ...rest } = o;
      return rest;
    });
    const time = /"time":"[^"]*",/;
    fc.assert(
      fc.property(line, (fields) => {
        const [before, after] = [lines(), lines()];
        pino(
          {
            name: "test",
            base: { service: "test" },
            timestamp: pino.stdTimeFunctions.isoTime,
            redact: { paths, censor: "[REDACTED]" },
            formatters: { level: (label) => ({ level: label }) },
          },
          before,
        ).info(structuredClone(fields), "line");
        createLogger("test", "info", after).info(structuredClone(fields), "line");
        expect(after.written[0]!.replace(time, "")).toBe(before.written[0]!.replace(time, ""));
      }),
      { numRuns: 2000 },
    );
  });
});

describe("createLogger without a destination", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "toolport-logger-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * A process whose stdout is a file and whose one thread-pool thread (UV_THREADPOOL_SIZE=1) is busy for
   * about a second (pbkdf2): it logs a line, then reads its stdout file at once. Answers whether the line was
   * there, and the file's text once the process has ended. `pinoDefault` logs with pino's own default
   * writer instead of createLogger, to show what the probe tells apart.
   */
  async function probe(pinoDefault: boolean): Promise<{ atOnce: string; file: string }> {
    const out = path.join(dir, `${pinoDefault ? "pino" : "ours"}.log`);
    // Everything loaded and the logger made first: the pool's work queued before the line is the pbkdf2 alone.
    const script = `
      import { pbkdf2 } from "node:crypto";
      import { readFileSync } from "node:fs";
      const log = process.env.PINO_DEFAULT
        ? (await import("pino")).pino()
        : (await import(process.env.LOGGER_URL)).createLogger("probe");
      pbkdf2("password", "salt", 1_000_000, 32, "sha256", () => {});
      log.info({ probe: 1 }, "written at once");
      process.stderr.write(readFileSync(process.env.OUT_FILE, "utf8").includes("written at once") ? "present" : "absent");
      process.exit(0);`;
    const child = spawn(
      process.execPath,
      ["--conditions=@toolport/source", "--import", "tsx", "--input-type=module", "-e", script],
      {
        cwd: path.dirname(new URL(import.meta.url).pathname),
        env: {
          ...process.env,
          UV_THREADPOOL_SIZE: "1",
          OUT_FILE: out,
          LOGGER_URL: new URL("./logger.ts", import.meta.url).href,
          ...(pinoDefault ? { PINO_DEFAULT: "1" } : {}),
        },
        stdio: ["ignore", openSync(out, "w"), "pipe"],
      },
    );
    let atOnce = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      atOnce += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(code, atOnce).toBe(0);
    return { atOnce, file: readFileSync(out, "utf8") };
  }

  it("writes a line to stdout before the call returns, not behind a busy thread pool", async () => {
    const ours = await probe(false);
    expect(ours.atOnce).toBe("present");
    expect(JSON.parse(ours.file.trim())).toMatchObject({ service: "probe", probe: 1, msg: "written at once" });
    // pino's default writer hands the line to the pool, where it waits behind the pbkdf2 (written at exit).
    const theirs = await probe(true);
    expect(theirs.atOnce).toBe("absent");
    expect(theirs.file).toContain("written at once");
  }, 30_000);
});
