/**
 * Secrets at rest (catalog's upstream credentials, webhooks' signing secrets) are sealed with
 * AES-256-GCM (node:crypto): a random 96-bit IV per value, the 128-bit tag kept with it, and the row's
 * identity bound in as associated data, so a sealed value copied onto another row fails to open.
 * Layout: version(1) | iv(12) | tag(16) | data.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

const VERSION = 1;

export class Sealer {
  private constructor(private readonly key: Buffer) {}

  /**
   * From a setting such as CATALOG_SECRET_KEY: 32 bytes as 64 hex characters or base64. Undefined
   * gives a local development key derived from `developmentPhrase`, which callers must warn about.
   */
  static fromSecret(
    secret: string | undefined,
    options: { setting: string; developmentPhrase: string } = {
      setting: "CATALOG_SECRET_KEY",
      developmentPhrase: "toolport local development credential key",
    },
  ): Sealer {
    if (secret === undefined || secret === "") return new Sealer(createHash("sha256").update(options.developmentPhrase).digest());
    return new Sealer(parseKey(secret, options.setting));
  }

  seal(plaintext: string, associated: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(associated, "utf8"));
    const data = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), data]);
  }

  open(sealed: Buffer, associated: string): string {
    if (sealed[0] !== VERSION) throw new Error(`unknown sealed credential version ${sealed[0]}`);
    const iv = sealed.subarray(1, 13);
    const tag = sealed.subarray(13, 29);
    const decipher = createDecipheriv("aes-256-gcm", this.key, iv);
    decipher.setAAD(Buffer.from(associated, "utf8"));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]).toString("utf8");
  }
}

export function parseKey(secret: string, setting = "CATALOG_SECRET_KEY"): Buffer {
  const trimmed = secret.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  if (key.length !== 32) {
    throw new Error(`${setting} must be 32 bytes, given as 64 hex characters or base64 (openssl rand -hex 32)`);
  }
  return key;
}
