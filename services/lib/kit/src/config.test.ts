import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, flag, loadConfig, port, url } from "./config.js";

describe("loadConfig", () => {
  const shape = {
    PORT: port(8080).describe("port to listen on"),
    NATS_URL: url(["nats"], "nats://127.0.0.1:4222").describe("NATS server"),
    VERBOSE: flag(false),
  };

  it("applies defaults when variables are unset", () => {
    expect(loadConfig(shape, {})).toEqual({ PORT: 8080, NATS_URL: "nats://127.0.0.1:4222", VERBOSE: false });
  });

  it("coerces strings from the environment", () => {
    expect(loadConfig(shape, { PORT: "9000", VERBOSE: "yes" })).toMatchObject({ PORT: 9000, VERBOSE: true });
  });

  it("names every bad variable, what it got and what it is for", () => {
    let error: unknown;
    try {
      loadConfig(shape, { PORT: "eighty", NATS_URL: "http://x" });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/PORT: .*\(got "eighty"\) - port to listen on/);
    expect(message).toMatch(/NATS_URL: must be a URL starting with nats:\/\/ \(got "http:\/\/x"\) - NATS server/);
  });

  it("never prints a secret's value: a key, secret or token by its name, or a URL's password", () => {
    const secrets = {
      MCP_REQUEST_STATE_KEY: z.string().min(32).describe("a secret"),
      NATS_URL: url(["nats"]),
    };
    let message = "";
    try {
      loadConfig(secrets, { MCP_REQUEST_STATE_KEY: "hunter2-short", NATS_URL: "http://user:pa55word@host" });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain("MCP_REQUEST_STATE_KEY");
    expect(message).toContain("(13 characters, not shown)");
    expect(message).toContain("NATS_URL");
    expect(message).not.toContain("hunter2");
    expect(message).not.toContain("pa55word");
  });

  it("refuses a port out of range", () => {
    expect(() => loadConfig(shape, { PORT: "70000" })).toThrow(/PORT/);
  });
});
