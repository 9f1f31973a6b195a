import { describe, expect, it } from "vitest";
import { AddressPolicy, forbiddenRange, OutboundRefused } from "./address-policy.js";

/** What the URL parser turns a host into: the form the connector receives. */
const hostOf = (url: string) => new URL(url).hostname;

describe("forbiddenRange", () => {
  it("refuses private, loopback, link-local, CGNAT, metadata and other special-purpose IPv4", () => {
    for (const ip of [
      "127.0.0.1",
      "127.255.255.254",
      "10.0.0.1",
      "172.16.5.4",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "100.100.100.200",
      "0.0.0.0",
      "255.255.255.255",
      "224.0.0.1",
      "192.0.2.1",
      "198.18.0.1",
      "240.0.0.1",
    ]) {
      expect(forbiddenRange(ip), ip).toBeDefined();
    }
    expect(forbiddenRange("93.184.216.34")).toBeUndefined();
    expect(forbiddenRange("8.8.8.8")).toBeUndefined();
  });

  it("refuses IPv6 loopback, unique-local, link-local and IPv4-embedding forms of refused addresses", () => {
    for (const ip of [
      "::1",
      "::",
      "fe80::1",
      "fd00:ec2::254",
      "fc00::1",
      "ff02::1",
      "::ffff:127.0.0.1",
      "::ffff:a9fe:a9fe",
      "64:ff9b::7f00:1",
      "2002:7f00:1::",
      "2001::1",
      "::127.0.0.1",
      "fec0::1",
    ]) {
      expect(forbiddenRange(ip), ip).toBeDefined();
    }
    expect(forbiddenRange("2606:4700:4700::1111")).toBeUndefined();
    expect(forbiddenRange("::ffff:8.8.8.8")).toBeUndefined();
  });

  it("sees through decimal, octal, hex and shortened IPv4 forms once the URL is parsed", () => {
    for (const url of [
      "http://2130706433/",
      "http://0177.0.0.1/",
      "http://0x7f.0.0.1/",
      "http://0x7f000001/",
      "http://127.1/",
      "http://[::ffff:127.0.0.1]/",
      "http://[::ffff:7f00:1]/",
      "http://0251.0376.0251.0376/",
    ]) {
      const host = hostOf(url).replace(/^\[|\]$/g, "");
      expect(forbiddenRange(host), url).toBeDefined();
    }
  });
});

describe("AddressPolicy", () => {
  it("checks every address a name resolves to", async () => {
    const policy = new AddressPolicy();
    await expect(policy.resolve("localhost", 80)).rejects.toBeInstanceOf(OutboundRefused);
    await expect(policy.resolve("127.0.0.1", 80)).rejects.toThrow(/127\.0\.0\.1 is not allowed \(loopback\)/);
    await expect(policy.resolve("[::1]", 80)).rejects.toThrow(/loopback/);
  });

  it("lets operators allow hosts, ranges and host:port pairs", async () => {
    const policy = new AddressPolicy("127.0.0.1:8081, 10.1.0.0/16, [::1]:9000, api.internal");
    expect(() => policy.check("127.0.0.1", "127.0.0.1", 8081)).not.toThrow();
    expect(() => policy.check("127.0.0.1", "127.0.0.1", 8082)).toThrow(OutboundRefused);
    expect(() => policy.check("x", "10.1.200.3", 443)).not.toThrow();
    expect(() => policy.check("x", "10.2.0.1", 443)).toThrow(OutboundRefused);
    expect(() => policy.check("::1", "::1", 9000)).not.toThrow();
    expect(() => policy.check("::1", "::1", 9001)).toThrow(OutboundRefused);
    expect(() => policy.check("api.internal", "192.168.3.3", 80)).not.toThrow();
    expect(() => policy.check("other.internal", "192.168.3.3", 80)).toThrow(OutboundRefused);
    // A name resolving to an allowed address is allowed (the address entry matches what is dialled).
    await expect(policy.resolve("localhost", 8081)).resolves.toMatchObject({
      address: expect.stringMatching(/127\.0\.0\.1|::1/),
    });
  });

  it("rejects malformed allow-list entries at start", () => {
    expect(() => new AddressPolicy("10.0.0.0/99", "EXECUTION_OUTBOUND_ALLOW")).toThrow(/EXECUTION_OUTBOUND_ALLOW/);
    expect(() => new AddressPolicy("host:notaport")).toThrow(/bad port/);
    expect(() => new AddressPolicy("bad host!", "CATALOG_OUTBOUND_ALLOW")).toThrow(
      /CATALOG_OUTBOUND_ALLOW entry host!: not a host name/,
    );
    expect(() => new AddressPolicy("[::1:80")).toThrow(/outbound allow list entry \[::1:80: unclosed/);
  });
});
