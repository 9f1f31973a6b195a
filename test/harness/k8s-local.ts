/**
 * A rendered overlay's Toolport Deployments run as local processes, as a cluster would run them but
 * without one: each pod's init containers to completion, then its container, with exactly the args the
 * manifest gives and the environment the render resolves (ConfigMaps, Secrets), started as the image's
 * ENTRYPOINT starts it (deploy/Dockerfile) from the built workspace. Used by k8s-smoke.test.ts, whose
 * header says what is kept, what stands in for the cluster and what is overridden, and why.
 *
 * The stand-ins, all on loopback (Linux routes all of 127.0.0.0/8 to `lo`):
 * - a pod IP: an address of its own in a /24 of 127/8 picked at random per run (`podSubnet`), so every
 *   pod binds the manifest's fixed ports (8080, 50051, the shared METRICS_PORT 9464, ...) without clashing
 *   with another pod, with tests binding 127.0.0.1, or with a second run of the same test on this host;
 * - Service DNS: a URL in an env value whose host names a Service of the render is rewritten to the
 *   address of the pod its selector picks, on the container port its targetPort names (what kube-proxy
 *   does), or to a stand-in's address given for a Service whose pods are not the image's (Postgres, NATS).
 */
import { randomInt } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  type HealthCheckRequest,
  HealthCheckRequestSchema,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "@toolport/proto/grpc/health/v1/health_pb";
import { type Container, IMAGE, imageName, type Probe, type Render, repoRoot, type ServicePort, type Workload } from "./k8s.js";
import { type Started, startProcess } from "./process.js";

// ---- the image -------------------------------------------------------------------------------------------

export interface ImageEntry {
  /** The ENTRYPOINT, with `node` as the Node running the tests and /app as the deployed package's folder. */
  command: string;
  args: string[];
  /** WORKDIR, mapped the same way. */
  cwd: string;
  /** The runtime stage's ENV (NODE_ENV=production). */
  env: Record<string, string>;
  /** The workspace package the image deploys (`pnpm --filter <name> deploy ... /out`, copied to /app). */
  packageName: string;
}

/**
 * How the image starts a container, read from deploy/Dockerfile: its runtime stage copies the deployed
 * workspace package (`pnpm --filter @toolport/host deploy ... /out`) to /app and enters
 * `node /app/dist/main.js`. Here /app is that package's folder in the built workspace (its dist/ is what
 * the deploy copies; deploy-image.test.ts checks that the deployed folder runs the same way).
 */
export function imageEntry(): ImageEntry {
  const text = readFileSync(path.join(repoRoot, "deploy/Dockerfile"), "utf8").replace(/\\\n/g, " ");
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  const lastFrom = lines.findLastIndex((l) => /^FROM\s/i.test(l));
  const runtime = lines.slice(lastFrom);
  const arg = (op: string, from = runtime) => from.findLast((l) => l.toUpperCase().startsWith(`${op} `))?.slice(op.length + 1);

  const deploy = /--filter\s+(\S+)\s+deploy\b.*\s(\/\S+)$/.exec(
    lines.find((l) => /\bdeploy\b/.test(l) && /^RUN\s/i.test(l)) ?? "",
  );
  const copy = runtime.find((l) => /^COPY\s+--from=\S+\s/i.test(l))?.split(/\s+/);
  if (!deploy || !copy)
    throw new Error("deploy/Dockerfile: no `pnpm --filter <package> deploy ... <dir>` copied into the runtime stage");
  const [, packageName, outDir] = deploy;
  const appDir = copy.at(-1)!;
  if (copy.at(-2) !== outDir) throw new Error(`deploy/Dockerfile copies ${copy.at(-2)}, not the deploy's output ${outDir}`);
  const packageDir = workspacePackageDir(packageName!);
  const toLocal = (p: string) => (p === appDir || p.startsWith(`${appDir}/`) ? path.join(packageDir, p.slice(appDir.length)) : p);

  const entrypoint = JSON.parse(arg("ENTRYPOINT") ?? "null") as string[] | null;
  if (entrypoint?.[0] !== "node") throw new Error(`deploy/Dockerfile: ENTRYPOINT is not node: ${arg("ENTRYPOINT")}`);
  const env: Record<string, string> = {};
  for (const line of runtime.filter((l) => /^ENV\s/i.test(l))) {
    for (const [, k, v] of line.slice(4).matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) env[k!] = v!.replace(/^"|"$/g, "");
  }
  return {
    command: process.execPath,
    args: entrypoint.slice(1).map(toLocal),
    cwd: toLocal(arg("WORKDIR") ?? "/"),
    env,
    packageName: packageName!,
  };
}

/** The folder of the workspace package with this name (pnpm-workspace.yaml: proto, services/*, services/lib/*, gateway, ...). */
function workspacePackageDir(name: string): string {
  const candidates = [
    ...readdirSync(path.join(repoRoot, "services")).map((d) => `services/${d}`),
    ...readdirSync(path.join(repoRoot, "services/lib")).map((d) => `services/lib/${d}`),
    "gateway",
    "mcp-server",
    "proto",
  ];
  for (const dir of candidates) {
    try {
      if ((JSON.parse(readFileSync(path.join(repoRoot, dir, "package.json"), "utf8")) as { name: string }).name === name) {
        return path.join(repoRoot, dir);
      }
    } catch {}
  }
  throw new Error(`no workspace package named ${name}`);
}

// ---- pods and Services ---------------------------------------------------------------------------------

export interface LocalPod {
  /** The Deployment's name. */
  name: string;
  /** Its role (`--roles=<role>` of its container). */
  role: string;
  workload: Workload;
  /** The loopback address standing in for the pod's IP. */
  ip: string;
  initContainers: Container[];
  container: Container;
}

/** A random 127.x.y.0/24 (x in 100..199, away from 127.0.0.1 and systemd's 127.0.0.53): this run's pod network. */
export function podSubnet(): string {
  return `127.${100 + randomInt(100)}.${randomInt(256)}`;
}

/**
 * Every Deployment whose container runs the image, with a pod address of its own in `subnet`. Refuses
 * what this runner cannot do as a cluster would: a second container (a sidecar), a `command` (which would
 * replace the ENTRYPOINT), or service links (the env a cluster would add from every Service).
 */
export function planPods(render: Render, subnet: string): LocalPod[] {
  const roleOf = new Map([...render.roles()].map(([role, w]) => [w.object, role]));
  const pods: LocalPod[] = [];
  for (const workload of render.workloads().filter((w) => w.object.kind === "Deployment")) {
    const name = workload.object.metadata.name;
    const mine = workload.pod.containers.filter((c) => imageName(c.image) === IMAGE);
    if (mine.length === 0) continue;
    if (workload.pod.containers.length !== 1)
      throw new Error(`${name}: ${workload.pod.containers.length} containers; one is run here`);
    const all = [...(workload.pod.initContainers ?? []), ...workload.pod.containers];
    for (const c of all) {
      if (imageName(c.image) !== IMAGE) throw new Error(`${name}/${c.name}: image ${c.image} is not ${IMAGE}`);
      if ((c as { command?: string[] }).command)
        throw new Error(`${name}/${c.name}: a command replaces the ENTRYPOINT; not run here`);
    }
    if ((workload.pod as { enableServiceLinks?: boolean }).enableServiceLinks !== false) {
      throw new Error(`${name}: enableServiceLinks is not false, so a cluster would add a variable per Service; not run here`);
    }
    const role = roleOf.get(workload.object);
    if (!role) throw new Error(`${name}: its container has no --roles=<role>`);
    pods.push({
      name,
      role,
      workload,
      ip: `${subnet}.${10 + pods.length}`,
      initContainers: workload.pod.initContainers ?? [],
      container: mine[0]!,
    });
  }
  return pods;
}

/** A container port by number or by name, as probes and Services name them. */
export function containerPort(c: Container, port: number | string): number {
  if (typeof port === "number") return port;
  const found = c.ports?.find((p) => p.name === port)?.containerPort;
  if (found === undefined) throw new Error(`${c.name}: no container port named ${port}`);
  return found;
}

const URL_AUTHORITY = /^([a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?)([^:/?#@]+)(?::(\d+))?/i;

/**
 * Service DNS on loopback: `rewrite(value)` replaces the host:port of a URL whose host names a Service of
 * the render (`name`, `name.namespace`, `name.namespace.svc...`) with where that Service sends here; any
 * other value is returned as it is. A URL naming a Service on a port it does not have, a Service with no
 * pod or several, or one whose pods are not the image's and that has no stand-in, is an error: in a
 * cluster that connection would fail too.
 */
export function serviceDns(
  render: Render,
  pods: LocalPod[],
  standIns: Record<string, string>,
): { rewrite(value: string): string; address(service: string, port: string | number): string } {
  const address = (serviceName: string, wanted: string | number): string => {
    const service = render.find("Service", serviceName);
    if (!service) throw new Error(`no Service ${serviceName} in the render`);
    const port = (service.spec as { ports?: ServicePort[] }).ports?.find((p) => p.port === wanted || p.name === wanted);
    if (!port) throw new Error(`Service ${serviceName} has no port ${wanted}`);
    if (serviceName in standIns) return standIns[serviceName]!;
    const backends = render.backends(service, port);
    const pod = backends.length === 1 ? pods.find((p) => p.workload.object === backends[0]!.workload.object) : undefined;
    if (!pod) {
      const names = backends.map((b) => b.workload.object.metadata.name).join(", ") || "none";
      throw new Error(`Service ${serviceName}: selects ${names}; one Deployment run here, or a stand-in, is needed`);
    }
    if (backends[0]!.containerPort === undefined) {
      throw new Error(`Service ${serviceName}: targetPort ${port.targetPort ?? port.port} is no port of ${pod.name}`);
    }
    return `${pod.ip}:${backends[0]!.containerPort}`;
  };
  const rewrite = (value: string): string => {
    const m = URL_AUTHORITY.exec(value);
    if (!m) return value;
    const [whole, head, host, explicitPort] = m;
    const [first, namespace] = host!.split(".");
    const service = render.find("Service", first!);
    if (!service) return value;
    if (namespace !== undefined && service.metadata.namespace !== undefined && namespace !== service.metadata.namespace) {
      throw new Error(`${value}: names Service ${first} in namespace ${namespace}; it is in ${service.metadata.namespace}`);
    }
    const found = render.serviceAt(value);
    if (!found) throw new Error(`${value}: Service ${first} has no port ${explicitPort ?? "(the scheme's default)"}`);
    return `${head}${address(first!, found.port.port)}${value.slice(whole!.length)}`;
  };
  return { rewrite, address };
}

/**
 * The environment a container starts with: the image's ENV, then what the render resolves for it
 * (envFrom ConfigMaps, env literals, ConfigMap and Secret keys; env over envFrom), each value through
 * `rewrite`. An optional key that is absent is left unset, as Kubernetes does; a required one, or a kind
 * of source this runner cannot resolve, is an error (a cluster would not start the pod either).
 */
export function containerEnv(
  render: Render,
  c: Container,
  image: ImageEntry,
  rewrite: (value: string) => string,
): Record<string, string> {
  for (const from of c.envFrom ?? []) {
    // Render.env reads envFrom ConfigMaps only: a whole Secret must be absent and optional here.
    if (from.secretRef && (render.find("Secret", from.secretRef.name) || !from.secretRef.optional)) {
      throw new Error(`${c.name}: envFrom Secret ${from.secretRef.name} is not resolved by this runner`);
    }
    if (from.configMapRef && !render.find("ConfigMap", from.configMapRef.name)) {
      throw new Error(`${c.name}: envFrom ConfigMap ${from.configMapRef.name} is not in the render`);
    }
  }
  const env: Record<string, string> = { ...image.env };
  for (const [name, source] of render.env(c)) {
    const value = render.value(source);
    if (value === undefined) {
      if (source.from === "secret" && source.optional) continue;
      throw new Error(`${c.name}: ${name} has no value in the render (${JSON.stringify(source)})`);
    }
    env[name] = rewrite(value);
  }
  return env;
}

// ---- processes -----------------------------------------------------------------------------------------

export interface LocalProcess {
  pod: LocalPod;
  container: Container;
  started: Started;
  /** What it wrote (stdout and stderr), the end of it when long. */
  tail(chars?: number): string;
}

export function runContainer(pod: LocalPod, c: Container, image: ImageEntry, env: Record<string, string>): LocalProcess {
  const started = startProcess(image.command, [...image.args, ...(c.args ?? [])], { cwd: image.cwd, env });
  return {
    pod,
    container: c,
    started,
    tail: (chars = 6000) => {
      const text = started.output();
      const what = `[${pod.name}/${c.name}: ${[...image.args, ...(c.args ?? [])].join(" ")}]`;
      if (text === "") return `${what} (wrote nothing yet)`;
      return `${what}\n${text.length > chars ? `...${text.slice(-chars)}` : text}`;
    },
  };
}

/** Fails, naming the address, when something already listens on one of the pod's container ports. */
export async function assertPortsFree(pod: LocalPod): Promise<void> {
  for (const p of pod.container.ports ?? []) {
    await new Promise<void>((resolve, reject) => {
      const server = net.createServer();
      server.once("error", (err) =>
        reject(
          new Error(
            `${pod.name}: cannot bind ${pod.ip}:${p.containerPort} (${(err as Error).message}); another process listens on ` +
              `that port on every address (0.0.0.0), or loopback aliases do not work on this host (Linux routes all of 127/8 to lo)`,
          ),
        ),
      );
      server.listen(p.containerPort, pod.ip, () => server.close(() => resolve()));
    });
  }
}

// ---- probes --------------------------------------------------------------------------------------------

export interface ProbeResult {
  ok: boolean;
  /** What was checked and what it answered. */
  detail: string;
}

const healthCheck = (ip: string, port: number, service: string, timeoutMs: number) =>
  new Promise<{ status?: ServingStatus; error?: string }>((resolve) => {
    const client = new grpc.Client(`${ip}:${port}`, grpc.credentials.createInsecure());
    client.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      (m: HealthCheckRequest) => Buffer.from(toBinary(HealthCheckRequestSchema, m)),
      (b: Buffer) => fromBinary(HealthCheckResponseSchema, b),
      create(HealthCheckRequestSchema, { service }),
      { deadline: Date.now() + timeoutMs },
      (err: grpc.ServiceError | null, res?: HealthCheckResponse) => {
        client.close();
        resolve(err ? { error: `${grpc.status[err.code]}: ${err.details}` } : { status: res?.status });
      },
    );
  });

/**
 * One probe as the kubelet runs it against the pod's address: httpGet succeeds on a status from 200 to
 * 399, grpc on grpc.health.v1 Check answering SERVING for `service` (default ""), tcpSocket on a
 * connection; each within timeoutSeconds (default 1). exec probes are not run here.
 */
export async function runProbe(pod: LocalPod, c: Container, probe: Probe): Promise<ProbeResult> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  if (probe.httpGet) {
    const port = containerPort(c, probe.httpGet.port);
    const url = `http://${pod.ip}:${port}${probe.httpGet.path ?? "/"}`;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
      await res.arrayBuffer();
      return { ok: res.status >= 200 && res.status < 400, detail: `GET ${url} -> ${res.status}` };
    } catch (err) {
      return { ok: false, detail: `GET ${url} -> ${(err as Error).message}` };
    }
  }
  if (probe.grpc) {
    const service = probe.grpc.service ?? "";
    const res = await healthCheck(pod.ip, probe.grpc.port, service, timeoutMs);
    const answer = res.error ?? ServingStatus[res.status ?? ServingStatus.UNKNOWN];
    return {
      ok: res.status === ServingStatus.SERVING,
      detail: `grpc.health.v1 Check("${service}") at ${pod.ip}:${probe.grpc.port} -> ${answer}`,
    };
  }
  if (probe.tcpSocket) {
    const port = containerPort(c, probe.tcpSocket.port);
    const error = await new Promise<string | undefined>((resolve) => {
      const socket = net.connect({ host: pod.ip, port, timeout: timeoutMs });
      socket.once("connect", () => {
        socket.destroy();
        resolve(undefined);
      });
      socket.once("timeout", () => {
        socket.destroy();
        resolve("timed out");
      });
      socket.once("error", (err) => resolve(err.message));
    });
    return { ok: !error, detail: `connect ${pod.ip}:${port} -> ${error ?? "connected"}` };
  }
  throw new Error(`${pod.name}/${c.name}: probe ${JSON.stringify(probe)} is not run here (httpGet, grpc and tcpSocket are)`);
}
