/**
 * Stored upstream credentials are sealed with AES-256-GCM (node:crypto): a random 96-bit IV per
 * value, the 128-bit tag kept with it, and the service and scope owner bound in as associated data,
 * so a sealed value copied onto another row fails to open. Layout: version(1) | iv(12) | tag(16) | data.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";

const VERSION = 1;

export class CredentialSealer {
  private constructor(private readonly key: Buffer) {}

  /**
   * From CATALOG_SECRET_KEY: 32 bytes as 64 hex characters or base64. Undefined gives the local
   * development key (derived from a fixed phrase), which callers must warn about.
   */
  static fromSecret(secret: string | undefined): CredentialSealer {
    if (secret === undefined || secret === "") return new CredentialSealer(LOCAL_DEVELOPMENT_KEY);
    return new CredentialSealer(parseKey(secret));
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

export function parseKey(secret: string): Buffer {
  const trimmed = secret.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, "hex") : Buffer.from(trimmed, "base64");
  if (key.length !== 32) {
    throw new Error("CATALOG_SECRET_KEY must be 32 bytes, given as 64 hex characters or base64 (openssl rand -hex 32)");
  }
  return key;
}

/** Only for local runs: anyone reading this file knows it. */
const LOCAL_DEVELOPMENT_KEY = createHash("sha256").update("toolport local development credential key").digest();
