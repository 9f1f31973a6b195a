/**
 * Configuration: every process declares one zod schema over its environment, parsed once at start.
 * A bad value stops the process with a message naming the variable and how to fix it.
 */
import { z } from "zod";

export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * Parses `env` against `shape`. Each schema's `.describe()` text is repeated in the error so the
 * operator learns what the variable is for, not only that it is wrong.
 */
export function loadConfig<S extends z.ZodRawShape>(shape: S, env: NodeJS.ProcessEnv = process.env): z.infer<z.ZodObject<S>> {
  const result = z.object(shape).safeParse(env);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? "?");
    const raw = env[name];
    const shown =
      raw === undefined ? "unset" : isSecret(name, raw) ? `${raw.length} characters, not shown` : `got ${JSON.stringify(raw)}`;
    const what = (shape[name] as { description?: string } | undefined)?.description;
    return `  ${name}: ${issue.message} (${shown})${what ? ` - ${what}` : ""}`;
  });
  throw new ConfigError(`invalid configuration:\n${lines.join("\n")}`);
}

/**
 * Whether a variable's value must not be printed in a configuration error (which goes to the log): a
 * key, secret, token or password by its name, or a URL carrying a password.
 */
function isSecret(name: string, value: string): boolean {
  return /(KEY|SECRET|TOKEN|PASSWORD|XPUB|MNEMONIC)S?$/i.test(name) || /^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^/@\s]*@/i.test(value);
}

/** A TCP port, from a string variable. */
export const port = (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback);

/** An absolute URL with one of the given schemes. */
export const url = (schemes: string[], fallback?: string) => {
  const base = z
    .string()
    .trim()
    .refine(
      (value) => {
        try {
          return schemes.includes(new URL(value).protocol.replace(/:$/, ""));
        } catch {
          return false;
        }
      },
      { message: `must be a URL starting with ${schemes.map((s) => `${s}://`).join(" or ")}` },
    );
  return fallback === undefined ? base : base.default(fallback);
};

/** A comma-separated list: each entry trimmed, empty ones dropped (`fallback` when unset). */
export const commaList = (fallback = "") =>
  z
    .string()
    .default(fallback)
    .transform((value) =>
      value
        .split(",")
        .map((entry) => entry.trim())
        .filter(Boolean),
    );

/** A boolean written as true/false/1/0/yes/no. */
export const flag = (fallback: boolean) =>
  z
    .enum(["true", "false", "1", "0", "yes", "no", ""])
    .default(fallback ? "true" : "false")
    .transform((value) => value === "true" || value === "1" || value === "yes");

export const logLevel = z
  .enum(["trace", "debug", "info", "warn", "error", "fatal", "silent"])
  .default("info")
  .describe("log level: trace, debug, info, warn, error, fatal or silent");

/** Addresses of the six services, shared by every process that calls one of them. */
export const serviceUrls = {
  CATALOG_URL: url(["http"], "http://127.0.0.1:50051").describe("gRPC address of the catalog service"),
  EXECUTION_URL: url(["http"], "http://127.0.0.1:50052").describe("gRPC address of the execution service"),
  BILLING_URL: url(["http"], "http://127.0.0.1:50053").describe("gRPC address of the billing service"),
  IDENTITY_URL: url(["http"], "http://127.0.0.1:50054").describe("gRPC address of the identity service"),
  CONTENT_URL: url(["http"], "http://127.0.0.1:50055").describe("gRPC address of the content service"),
  WEBHOOKS_URL: url(["http"], "http://127.0.0.1:50056").describe("gRPC address of the webhooks service"),
};
