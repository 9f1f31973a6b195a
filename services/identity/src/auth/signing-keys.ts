/**
 * The ES256 key pair Toolport signs JWTs with: generated on first start, stored in identity's
 * database with the private half encrypted (AES-256-GCM, key derived by HKDF-SHA256 from
 * IDENTITY_SECRET_KEY, the kid as associated data), so every replica signs with the same key and a
 * restart keeps issued tokens valid.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import type { Logger } from "@toolport/kit/logger";
import { type Pool, withTransaction } from "@toolport/kit/pg";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from "jose";

export const SIGNING_ALG = "ES256";

export interface SigningKey {
  kid: string;
  privateJwk: JWK;
  /** Public keys of every non-retired signing key, for the JWKS. */
  publicJwks: JWK[];
}

function encryptionKey(secret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "toolport-identity", "jwt-signing-key-v1", 32));
}

function encrypt(secret: string, kid: string, plaintext: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", encryptionKey(secret), iv);
  cipher.setAAD(Buffer.from(kid));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

function decrypt(secret: string, kid: string, sealed: Buffer): string {
  const decipher = createDecipheriv("aes-256-gcm", encryptionKey(secret), sealed.subarray(0, 12));
  decipher.setAAD(Buffer.from(kid));
  decipher.setAuthTag(sealed.subarray(12, 28));
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString("utf8");
}

// Replicas starting together must not each create a key.
const SIGNING_KEY_LOCK_ID = 7_401_2025;

export async function loadSigningKey(pool: Pool, secret: string, log: Logger): Promise<SigningKey> {
  const current = await withTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock($1)", [SIGNING_KEY_LOCK_ID]);
    const { rows } = await client.query<{ kid: string; private_jwk_encrypted: Buffer }>(
      "SELECT kid, private_jwk_encrypted FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC LIMIT 1",
    );
    if (rows[0]) return rows[0];
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const privateJwk = { ...(await exportJWK(privateKey)), kid, alg: SIGNING_ALG };
    const sealed = encrypt(secret, kid, JSON.stringify(privateJwk));
    await client.query("INSERT INTO signing_keys (kid, alg, public_jwk, private_jwk_encrypted) VALUES ($1, $2, $3, $4)", [
      kid,
      SIGNING_ALG,
      JSON.stringify({ ...publicJwk, kid, alg: SIGNING_ALG, use: "sig" }),
      sealed,
    ]);
    log.info({ kid }, "generated the JWT signing key");
    return { kid, private_jwk_encrypted: sealed };
  });
  let privateJwk: JWK;
  try {
    privateJwk = JSON.parse(decrypt(secret, current.kid, current.private_jwk_encrypted)) as JWK;
  } catch {
    throw new Error(
      `cannot decrypt JWT signing key ${current.kid}: IDENTITY_SECRET_KEY is not the value it was stored with; ` +
        "restore that value (or retire the key in signing_keys to start a new one, invalidating issued tokens)",
    );
  }
  const { rows } = await pool.query<{ public_jwk: JWK }>(
    "SELECT public_jwk FROM signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC",
  );
  return { kid: current.kid, privateJwk, publicJwks: rows.map((r) => r.public_jwk) };
}
