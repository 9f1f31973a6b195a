/**
 * Resolves secret references in connected credentials at call time (DESIGN.md: `env://NAME` and
 * `vault://path` are accepted where a secret is expected).
 *
 * - `env://NAME`: the execution process's environment variable NAME. Only names starting with
 *   EXECUTION_ENV_SECRET_PREFIX (default `TOOLPORT_SECRET_`) resolve: a credential is connected by a
 *   caller, and an unrestricted reference would let anyone send the operator's own variables
 *   (DATABASE_URL, the consent secret...) to an upstream of their choosing.
 * - `vault://<mount>/<path>#<field>` (or `vault://<mount>/data/<path>#<field>`): a HashiCorp Vault KV version 2 secret, read over HTTP from VAULT_ADDR
 *   with VAULT_TOKEN (`GET {VAULT_ADDR}/v1/<mount>/data/<path>`, header X-Vault-Token, optional
 *   VAULT_NAMESPACE), field default `value`. Paths outside EXECUTION_VAULT_PATH_PREFIX (when set) are
 *   refused. Vault is the operator's own service, so it is not subject to the outbound address policy;
 *   values are cached for 60 seconds.
 * A reference that cannot be resolved is a platform failure whose message names the reference, never a value.
 */
import { request } from "undici";
import { ExecutionFailure } from "../domain/failure.js";

export interface SecretRefConfig {
  envPrefix: string;
  vaultAddr?: string;
  vaultToken?: string;
  vaultNamespace?: string;
  vaultPathPrefix?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

const CACHE_MS = 60_000;

export class SecretRefs {
  private readonly cache = new Map<string, { value: string; until: number }>();

  constructor(private readonly config: SecretRefConfig) {}

  static isReference(value: string): boolean {
    return value.startsWith("env://") || value.startsWith("vault://");
  }

  /** The secret itself: literals are returned unchanged. */
  async resolve(value: string): Promise<string> {
    if (value.startsWith("env://")) return this.fromEnv(value.slice("env://".length));
    if (value.startsWith("vault://")) return this.fromVault(value);
    return value;
  }

  private fromEnv(name: string): string {
    if (!name.startsWith(this.config.envPrefix)) {
      throw new ExecutionFailure(
        "platform",
        "credential_reference_refused",
        `credential reference env://${name} is not allowed: only variables starting with ${this.config.envPrefix} can be referenced`,
      );
    }
    const value = (this.config.env ?? process.env)[name];
    if (value === undefined || value === "") {
      throw new ExecutionFailure("platform", "credential_reference_unresolved", `credential reference env://${name} is not set`);
    }
    return value;
  }

  private async fromVault(ref: string): Promise<string> {
    const cached = this.cache.get(ref);
    if (cached && cached.until > Date.now()) return cached.value;
    const { vaultAddr, vaultToken } = this.config;
    const unresolved = (why: string) =>
      new ExecutionFailure(
        "platform",
        "credential_reference_unresolved",
        `credential reference ${ref} could not be read: ${why}`,
      );
    if (!vaultAddr || !vaultToken) throw unresolved("VAULT_ADDR and VAULT_TOKEN are not configured");
    const [pathPart, field = "value"] = ref.slice("vault://".length).split("#", 2) as [string, string?];
    const [mount, ...rest] = pathPart.split("/").filter(Boolean);
    if (!mount || rest.length === 0 || rest.some((s) => s === ".." || s === "."))
      throw unresolved("expected vault://<mount>/<path>#<field>");
    const path = `${mount}/${rest.join("/")}`;
    if (this.config.vaultPathPrefix && !path.startsWith(this.config.vaultPathPrefix)) {
      throw new ExecutionFailure(
        "platform",
        "credential_reference_refused",
        `credential reference ${ref} is outside the allowed Vault paths`,
      );
    }
    // Both the logical path (secret/app) and the KV v2 API path (secret/data/app) are accepted.
    const secretPath = rest[0] === "data" && rest.length > 1 ? rest.slice(1) : rest;
    const url = new URL(`/v1/${encodeURIComponent(mount)}/data/${secretPath.map(encodeURIComponent).join("/")}`, vaultAddr);
    let status: number;
    let body: unknown;
    try {
      const res = await request(url, {
        method: "GET",
        headers: {
          "x-vault-token": vaultToken,
          ...(this.config.vaultNamespace ? { "x-vault-namespace": this.config.vaultNamespace } : {}),
        },
        signal: AbortSignal.timeout(this.config.timeoutMs ?? 5000),
      });
      status = res.statusCode;
      body = await res.body.json().catch(() => undefined);
    } catch (err) {
      throw unresolved(`Vault is unreachable (${(err as Error).message})`);
    }
    if (status !== 200) throw unresolved(`Vault answered HTTP ${status}`);
    const data = (body as { data?: { data?: Record<string, unknown> } } | undefined)?.data?.data;
    const value = data?.[field];
    if (typeof value !== "string" || value === "") throw unresolved(`field ${field} is missing`);
    this.cache.set(ref, { value, until: Date.now() + CACHE_MS });
    return value;
  }
}
