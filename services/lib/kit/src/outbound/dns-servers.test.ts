/**
 * OUTBOUND_DNS_SERVERS: its entries parsed and refused as the setting's validation does, and an
 * AddressPolicy given servers resolving names there (A and AAAA, every record checked) instead of the
 * system's resolver, against a minimal DNS responder on a loopback UDP port started here. Names that are
 * loopback by definition (localhost, *.localhost) are refused without asking any resolver.
 */
import dgram from "node:dgram";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { isIPv4 } from "node:net";
import ipaddr from "ipaddr.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { AddressPolicy, OutboundRefused } from "./address-policy.js";
import { outboundDnsEnv, parseDnsServers } from "./dns-servers.js";

/** name -> its A and AAAA records; other names are NXDOMAIN. */
const ZONE: Record<string, string[]> = {
  "public.test": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
  "private.test": ["10.1.2.3"],
  "mixed.test": ["93.184.216.34", "127.0.0.1"],
  "v6-loopback.test": ["::1"],
};

/** Answers one DNS query (RFC 1035 wire format) from ZONE; TTL 0. */
function answer(query: Buffer): Buffer {
  let offset = 12;
  const labels: string[] = [];
  while (query[offset]! > 0) {
    labels.push(query.subarray(offset + 1, offset + 1 + query[offset]!).toString("ascii"));
    offset += query[offset]! + 1;
  }
  const type = query.readUInt16BE(offset + 1);
  const question = query.subarray(12, offset + 5);
  const records = ZONE[labels.join(".").toLowerCase()];
  const wanted = (records ?? []).filter((ip) => isIPv4(ip) === (type === 1));
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.readUInt16BE(0), 0);
  header.writeUInt16BE(records ? 0x8180 : 0x8183, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(wanted.length, 6);
  const answers = wanted.map((ip) => {
    const data = Buffer.from(ipaddr.parse(ip).toByteArray());
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0);
    rr.writeUInt16BE(type, 2);
    rr.writeUInt16BE(1, 4);
    rr.writeUInt32BE(0, 6);
    rr.writeUInt16BE(data.length, 10);
    return Buffer.concat([rr, data]);
  });
  return Buffer.concat([header, question, ...answers]);
}

let socket: dgram.Socket;
let server: string;
beforeAll(async () => {
  socket = dgram.createSocket("udp4");
  socket.on("message", (msg, peer) => socket.send(answer(msg), peer.port, peer.address));
  socket.bind(0, "127.0.0.1");
  await once(socket, "listening");
  server = `127.0.0.1:${(socket.address() as AddressInfo).port}`;
});
afterAll(() => socket?.close());

describe("OUTBOUND_DNS_SERVERS", () => {
  const setting = z.object(outboundDnsEnv);

  it("takes ip and ip:port entries, IPv6 in brackets", () => {
    expect(parseDnsServers("")).toEqual([]);
    expect(parseDnsServers("10.0.0.53, 10.0.0.54:5353,[fd00::53],[::1]:53")).toEqual([
      "10.0.0.53",
      "10.0.0.54:5353",
      "[fd00::53]",
      "[::1]:53",
    ]);
    expect(setting.parse({}).OUTBOUND_DNS_SERVERS).toBe("");
  });

  it("refuses names, bare IPv6, bracketed IPv4 and bad ports", () => {
    for (const bad of ["dns.example", "::1", "[10.0.0.1]", "10.0.0.1:0", "10.0.0.1:65536", "10.0.0.1:x", "[::1"]) {
      expect(() => parseDnsServers(bad), bad).toThrow(/OUTBOUND_DNS_SERVERS entry/);
      expect(setting.safeParse({ OUTBOUND_DNS_SERVERS: bad }).success, bad).toBe(false);
    }
    expect(() => new AddressPolicy("", "X", { dnsServers: "10.0.0.1,nope" })).toThrow(/entry nope/);
  });
});

describe("AddressPolicy with OUTBOUND_DNS_SERVERS", () => {
  const policy = () => new AddressPolicy("", "TEST_ALLOW", { dnsServers: server });

  it("resolves names with those servers, A and AAAA", async () => {
    await expect(policy().resolve("public.test", 443)).resolves.toEqual({ address: "93.184.216.34", family: 4 });
  });

  it("refuses a name when any of its records is not allowed", async () => {
    await expect(policy().resolve("private.test", 80)).rejects.toThrow(/private\.test resolves to 10\.1\.2\.3/);
    await expect(policy().resolve("mixed.test", 80)).rejects.toThrow(/resolves to 127\.0\.0\.1.*loopback/);
    await expect(policy().resolve("v6-loopback.test", 80)).rejects.toThrow(/resolves to ::1/);
  });

  it("fails a name the servers do not know as ENOTFOUND, not as a refusal", async () => {
    await expect(policy().resolve("unknown.test", 80)).rejects.toMatchObject({ code: "ENOTFOUND" });
  });

  it("refuses localhost names as loopback without asking a resolver", async () => {
    for (const name of ["localhost", "localhost.", "api.localhost", "A.LOCALHOST."])
      await expect(policy().resolve(name, 80), name).rejects.toBeInstanceOf(OutboundRefused);
    await expect(new AddressPolicy().resolve("x.localhost", 80)).rejects.toThrow(/loopback/);
    await expect(new AddressPolicy("127.0.0.1:8081").resolve("x.localhost", 8081)).resolves.toMatchObject({
      address: "127.0.0.1",
    });
  });
});
