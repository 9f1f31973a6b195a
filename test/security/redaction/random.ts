/**
 * A seeded generator (xorshift32) and the alphabets the corpora draw from: the same seed gives the same
 * corpus on every run and machine, so a figure in a report can be reproduced.
 */

export const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
export const UPPER_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
export const LOWER_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789";
export const HEX = "0123456789abcdef";
export const BASE64 = `${ALNUM}+/`;
export const BASE64URL = `${ALNUM}-_`;
export const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }

  /** A uniform integer in [0, 2^32). */
  next(): number {
    let x = this.state;
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state;
  }

  /** A uniform integer in [min, max]. */
  int(min: number, max: number): number {
    return min + (this.next() % (max - min + 1));
  }

  pick<T>(items: readonly T[]): T {
    return items[this.next() % items.length]!;
  }

  chars(alphabet: string, length: number): string {
    let out = "";
    for (let i = 0; i < length; i++) out += alphabet[this.next() % alphabet.length];
    return out;
  }

  bytes(length: number): Buffer {
    const out = Buffer.alloc(length);
    for (let i = 0; i < length; i++) out[i] = this.next() & 0xff;
    return out;
  }

  base64(byteLength: number): string {
    return this.bytes(byteLength).toString("base64");
  }
}
