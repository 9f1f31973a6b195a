/**
 * A TCP balancer in front of the replicas of one role, standing where a Kubernetes Service stands: each
 * new connection goes to the next replica in turn (kube-proxy balances connections, not requests, so a
 * long-lived HTTP/2 session stays on one replica until it breaks). A replica that refuses the connection
 * (killed, still starting) is skipped, as the endpoints controller drops a pod that fails its readiness
 * probe; when a replica dies, the connections it held are cut, so its clients see what they would see
 * in a cluster: a reset, then a new connection to a live replica.
 *
 * Written here rather than taken from npm: the job is forty lines of node:net, and the proxies on npm
 * are HTTP proxies, which would hide exactly the connection behaviour this stands for.
 */
import net from "node:net";

export interface Balancer {
  port: number;
  /** Connections handed to each backend port so far. */
  connections: Map<number, number>;
  close(): Promise<void>;
}

export async function startBalancer(port: number, backends: number[]): Promise<Balancer> {
  let next = 0;
  const connections = new Map<number, number>(backends.map((b) => [b, 0]));
  const open = new Set<net.Socket>();

  const connect = (client: net.Socket, tried: number) => {
    const backendPort = backends[next++ % backends.length] as number;
    const upstream = net.connect({ port: backendPort, host: "127.0.0.1" });
    open.add(upstream);
    let connected = false;
    upstream.once("connect", () => {
      connected = true;
      connections.set(backendPort, (connections.get(backendPort) ?? 0) + 1);
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
    upstream.on("error", () => {
      if (!connected && tried + 1 < backends.length && !client.destroyed) return connect(client, tried + 1);
      client.destroy();
    });
    upstream.on("close", () => {
      open.delete(upstream);
      if (connected) client.destroy();
    });
    client.on("close", () => upstream.destroy());
  };

  const server = net.createServer({ pauseOnConnect: true }, (client) => {
    open.add(client);
    client.on("error", () => {});
    client.on("close", () => open.delete(client));
    connect(client, 0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  return {
    port,
    connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
