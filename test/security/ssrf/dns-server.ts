/**
 * A DNS server on 127.0.0.1 (UDP, dns-packet over node:dgram) whose answers the SSRF test sets: the
 * services point OUTBOUND_DNS_SERVERS at it, so a host name in a corpus URL resolves to whatever address
 * the case needs. A name may be given a sequence of answers (the n-th query of a record type gets the
 * n-th answer, the last repeating): a name answering an allowed address first and a private one after
 * is a DNS rebinding between the check and the connection. Answers carry TTL 0, so no resolver caches
 * them. Names it was not told of are NXDOMAIN.
 */
import dgram from "node:dgram";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import packet from "dns-packet";

export interface DnsAnswer {
  a?: string[];
  aaaa?: string[];
}

export interface TestDns {
  /** `127.0.0.1:<port>`, an OUTBOUND_DNS_SERVERS value. */
  server: string;
  /** Sets a name's answers (replacing earlier ones and their query counts). */
  set(name: string, ...answers: DnsAnswer[]): void;
  /** Queries of a record type ("A", "AAAA") for a name so far. */
  queries(name: string, type: "A" | "AAAA"): number;
  close(): Promise<void>;
}

const canonical = (name: string) => name.toLowerCase().replace(/\.$/, "");

export async function startDnsServer(): Promise<TestDns> {
  const zone = new Map<string, { answers: DnsAnswer[]; counts: Record<"A" | "AAAA", number> }>();
  const socket = dgram.createSocket("udp4");
  socket.on("message", (message, peer) => {
    let query: packet.Packet;
    try {
      query = packet.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    const entry = question ? zone.get(canonical(question.name)) : undefined;
    const answers: packet.Answer[] = [];
    if (question && entry && (question.type === "A" || question.type === "AAAA")) {
      const n = entry.counts[question.type]++;
      const answer = entry.answers[Math.min(n, entry.answers.length - 1)] ?? {};
      for (const data of (question.type === "A" ? answer.a : answer.aaaa) ?? [])
        answers.push({ type: question.type, class: "IN", name: question.name, ttl: 0, data });
    }
    const reply = packet.encode({
      id: query.id,
      type: "response",
      flags: packet.RECURSION_DESIRED | packet.RECURSION_AVAILABLE | (entry ? 0 : 3), // rcode 3: NXDOMAIN
      questions: query.questions,
      answers,
    });
    socket.send(reply, peer.port, peer.address);
  });
  socket.bind(0, "127.0.0.1");
  await once(socket, "listening");
  const { port } = socket.address() as AddressInfo;
  return {
    server: `127.0.0.1:${port}`,
    set(name, ...answers) {
      zone.set(canonical(name), { answers, counts: { A: 0, AAAA: 0 } });
    },
    queries: (name, type) => zone.get(canonical(name))?.counts[type] ?? 0,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
