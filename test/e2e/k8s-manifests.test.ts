/**
 * The Kubernetes manifests (deploy/k8s, kustomize), rendered and checked: the base and every overlay under
 * deploy/k8s/overlays, as `kubectl apply -k` would send them (rendered offline by the harness's k8s.ts;
 * kubectl 1.27 or newer must be on PATH, or every test here fails saying so).
 *
 * What the code decides is read from the code, not copied: each role's port (`defaultPort`), whom it calls
 * (its `createServiceClient(<X>Service, ...)` uses; GATEWAY_URL for the MCP server), its secret settings
 * (config keys named like one), which services call out to the internet (a `*_OUTBOUND_ALLOW` setting), the
 * drain time's default (SHUTDOWN_GRACE_MS) and the image's user (deploy/Dockerfile USER).
 *
 * The objects against the Kubernetes API's schemas: k8s-schemas.test.ts. The dev overlay's Deployments
 * started locally: k8s-smoke.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { createLogger } from "@toolport/kit/logger";
import { beforeAll, describe, expect, it } from "vitest";
import { v1Routes } from "../../gateway/src/app.js";
import { createServiceClients } from "../../gateway/src/clients.js";
import { loadGatewayConfig } from "../../gateway/src/config.js";
import { oauthServerRouter } from "../../gateway/src/routes/oauth-server.js";
import { METADATA_PATHS } from "../../mcp-server/src/authorization.js";
import { serviceEnv } from "../../services/lib/kit/src/service.js";
import {
  type Container,
  IMAGE,
  imageName,
  imageTag,
  k8sDir,
  type LabelSelector,
  type Labels,
  listRenders,
  matchesLabels,
  type NetworkPolicyPeer,
  type NetworkPolicyPort,
  type NetworkPolicySpec,
  type PodSpec,
  type Probe,
  type Render,
  render,
  repoRoot,
  requireKubectl,
  type ServicePort,
  secretValue,
  type Workload,
} from "../harness/k8s.js";

// ---- what the code says ----------------------------------------------------------------------------

/** Each role and the folder of its package (services/host/src/roles.ts imports them all; checked below). */
const ROLE_DIRS: Record<string, string> = {
  catalog: "services/catalog",
  execution: "services/execution",
  billing: "services/billing",
  identity: "services/identity",
  content: "services/content",
  webhooks: "services/webhooks",
  gateway: "gateway",
  "mcp-server": "mcp-server",
};
const ROLE_NAMES = Object.keys(ROLE_DIRS);
const EDGE = new Set(["gateway", "mcp-server"]);

/** Names of settings that hold (or, like URLs with a password, may hold) a secret. */
const SECRET_NAME = /SECRET|KEY|TOKEN|PASSWORD|XPUB|DATABASE_URL|NATS_URL|MEILI_URL/;
/** Config keys named like a secret that are not one, or need no reference of their own. */
const NOT_SECRET: Record<string, string> = {
  EXECUTION_ENV_SECRET_PREFIX: "a prefix of variable names, not a secret",
  MEILI_MASTER_KEY: "read only when MEILI_KEY is unset; the manifests give MEILI_KEY",
  NATS_NKEY_SEED_FILE: "a path: the seed is in the file, mounted from a Secret",
};
/**
 * Secrets a production install must set (the process falls back to a development key, or a key per
 * process, and only warns): their references are not optional, so a missing key stops the pod from starting.
 */
const MUST_BE_SET = ["CATALOG_SECRET_KEY", "EXECUTION_CONSENT_SECRET", "IDENTITY_SECRET_KEY", "WEBHOOKS_SECRET_KEY"];
/** Secrets the operator creates before installing (deploy/k8s/README.md); the dev overlay generates them. */
const OPERATOR_SECRETS = new Set([
  "toolport-infra",
  "toolport-secrets",
  "toolport-upstream-credentials",
  "toolport-migration",
  "toolport-nats",
]);

function sourceText(dir: string): string {
  const root = path.join(repoRoot, dir, "src");
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts"))
    .map((e) => readFileSync(path.join(e.parentPath, e.name), "utf8"))
    .join("\n");
}

interface RoleFacts {
  name: string;
  kind: "service" | "edge";
  port: number;
  /** Roles it calls. */
  calls: string[];
  /** Settings it reads (its config keys; the kit's for services). */
  settings: Set<string>;
  secrets: string[];
  /** Calls out to the internet (it has an *_OUTBOUND_ALLOW setting). */
  outbound: boolean;
  shutdownGraceMs: number;
}

function roleFacts(): Map<string, RoleFacts> {
  const kit = readFileSync(path.join(repoRoot, "services/lib/kit/src/service.ts"), "utf8");
  const keys = (text: string) => new Set([...text.matchAll(/^\s+([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]!));
  const facts = new Map<string, RoleFacts>();
  for (const [name, dir] of Object.entries(ROLE_DIRS)) {
    const source = sourceText(dir);
    const config = readFileSync(path.join(repoRoot, dir, "src/config.ts"), "utf8");
    const kind = EDGE.has(name) ? "edge" : "service";
    const port = Number(/defaultPort: (\d+)/.exec(source)?.[1]);
    const calls = [...source.matchAll(/createServiceClient\(\s*(\w+)Service\b/g)].map((m) => m[1]!.toLowerCase());
    if (/\bGATEWAY_URL\b/.test(config)) calls.push("gateway");
    const settings = keys(config);
    if (kind === "service") {
      for (const key of keys(kit)) settings.add(key);
      if (/\$\{upper\}_DATABASE_URL/.test(kit)) settings.add(`${name.toUpperCase()}_DATABASE_URL`);
    }
    const graceSource = kind === "service" ? kit : config;
    const grace = /SHUTDOWN_GRACE_MS:[\s\S]*?\.default\(([\d_]+)\)/.exec(graceSource)?.[1];
    facts.set(name, {
      name,
      kind,
      port,
      calls: [...new Set(calls)].sort(),
      settings,
      secrets: [...settings].filter((k) => SECRET_NAME.test(k) && !(k in NOT_SECRET)).sort(),
      outbound: [...settings].some((k) => k.endsWith("_OUTBOUND_ALLOW")),
      shutdownGraceMs: Number(grace?.replace(/_/g, "")),
    });
  }
  return facts;
}

// ---- the edge: what the gateway and the MCP server serve, from their code ------------------------------

/** Paths served inside the cluster only: probes and metrics never go through the Ingress. */
const INTERNAL_PATHS: Record<string, string> = {
  "/livez": "the gateway's liveness probe",
  "/readyz": "the gateway's readiness probe",
  "/metrics": "Prometheus scrapes the pods (on METRICS_PORT; the gateway also serves it on its own port)",
  "/mcp/health": "the MCP server's probe (under /mcp, so routed too, and harmless)",
};

/**
 * Every path the gateway serves, as a concrete example path (route parameters filled in): its routers'
 * routes (the /v1 API, with the OAuth callback, and the authorization server's) as the routers themselves
 * list them, and the pages its middleware answers (console, checkout returns, docs, llms.txt, probes,
 * metrics), read from the `ctx.path` comparisons in its source. A router the gateway adds beyond those two
 * fails the count below, so it is added here rather than left off the edge.
 */
function gatewayPaths(): { paths: string[]; routers: number } {
  const config = loadGatewayConfig({});
  const deps = { config, clients: createServiceClients(config), log: createLogger("k8s-edge", "silent") };
  const routed = [...v1Routes(deps).router.stack, ...oauthServerRouter(deps).stack].map((layer) => String(layer.path));
  const source = sourceText("gateway");
  const pages = [...source.matchAll(/ctx\.path(?:\.startsWith\(| [!=]== )"(\/[^"]*)"/g)].map((m) => m[1]!);
  const routers = [...source.matchAll(/new Router\(/g)].length;
  // A parameter or a trailing slash (a prefix) becomes a concrete element; "/" itself (the root page) stays.
  const concrete = (p: string) => (p === "/" ? p : p.replace(/:[A-Za-z_]+/g, "x").replace(/\/$/, "/x"));
  return { paths: [...new Set([...routed, ...pages].map(concrete))].sort(), routers };
}

/** Every path the MCP server serves: /mcp (and its probe) from its request handler, and its metadata paths. */
function mcpPaths(): string[] {
  const source = readFileSync(path.join(repoRoot, "mcp-server/src/http.ts"), "utf8");
  const literal = [...source.matchAll(/path [!=]== "(\/[^"]*)"/g)].map((m) => m[1]!);
  return [...new Set([...literal, ...METADATA_PATHS])].sort();
}

interface IngressRoute {
  path: string;
  pathType: string;
  service: string;
  port: number | string;
}

/** Which Ingress route a request path takes, as the Ingress API defines matching: Exact, else the longest Prefix by path elements. */
function ingressRouteFor(routes: IngressRoute[], requestPath: string): IngressRoute | undefined {
  const exact = routes.find((r) => r.pathType === "Exact" && r.path === requestPath);
  if (exact) return exact;
  const elements = (p: string) => p.split("/").filter(Boolean);
  const request = elements(requestPath);
  return routes
    .filter((r) => r.pathType === "Prefix")
    .filter((r) => elements(r.path).every((e, i) => request[i] === e))
    .sort((a, b) => elements(b.path).length - elements(a.path).length)[0];
}

/** A size as ingress-nginx reads proxy-body-size (nginx units: k, m, g are powers of 1024). */
function nginxSize(value: string | undefined): number {
  const m = /^(\d+)([kmg]?)$/i.exec(value ?? "");
  if (!m) return Number.NaN;
  return Number(m[1]) * 1024 ** " kmg".indexOf((m[2] || " ").toLowerCase());
}

// ---- the Postgres connection budget ------------------------------------------------------------------

/** Connections Postgres keeps for superusers (superuser_reserved_connections' default): not the roles' to use. */
const RESERVED_CONNECTIONS = 3;
/** What one migration run holds at once (kit/pg: the database check, then one client of its pool). */
const MIGRATION_CONNECTIONS = 2;

interface BudgetRow {
  role: string;
  /** Most connections one replica opens: its main pool and, where the service has one, its relaxed pool. */
  perReplica: number;
  /** Replicas at the HPA's maximum (or the fixed count), plus the rolling update's surge. */
  replicas: number;
  total: number;
}

/** The pods a Deployment may have at once: replicas (or the HPA's maximum) plus its maxSurge (25% by default, rounded up). */
function worstReplicas(r: Render, w: Workload): number {
  const hpa = r
    .of("HorizontalPodAutoscaler")
    .find((h) => (h.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name === w.object.metadata.name);
  const spec = w.object.spec as { replicas?: number; strategy?: { rollingUpdate?: { maxSurge?: number | string } } };
  const count = hpa ? (hpa.spec as { maxReplicas: number }).maxReplicas : (spec.replicas ?? 1);
  const surge = spec.strategy?.rollingUpdate?.maxSurge ?? "25%";
  const extra = typeof surge === "number" ? surge : Math.ceil((count * Number.parseInt(surge, 10)) / 100);
  return count + extra;
}

/**
 * Each service's worst case against Postgres in a render: pool sizes from the rendered env (the code's
 * defaults where unset: serviceEnv's for the main pool, the service's `relaxedPool(n)` for the second),
 * times its replicas at the autoscaler's maximum with the rollout's surge; plus a migration Job's run.
 */
function connectionBudget(r: Render, facts: Map<string, RoleFacts>): { rows: BudgetRow[]; total: number } {
  const rows: BudgetRow[] = [];
  for (const [role, w] of r.roles()) {
    if (facts.get(role)!.kind !== "service") continue;
    const main = w.pod.containers.find((c) => imageName(c.image) === IMAGE)!;
    const env = r.env(main);
    const upper = role.toUpperCase();
    const shape = serviceEnv(role, 1) as Record<string, { parse(v: unknown): unknown }>;
    const setting = (key: string, fallback: number) => {
      const value = r.value(env.get(key));
      return value === undefined ? fallback : Number(value);
    };
    const mainPool = setting(`${upper}_PG_POOL_MAX`, shape[`${upper}_PG_POOL_MAX`]!.parse(undefined) as number);
    const relaxedDefault = /relaxedPool\((\d+)\)/.exec(sourceText(ROLE_DIRS[role]!))?.[1];
    const relaxed = relaxedDefault === undefined ? 0 : setting(`${upper}_PG_RELAXED_POOL_MAX`, Number(relaxedDefault));
    const replicas = worstReplicas(r, w);
    rows.push({ role, perReplica: mainPool + relaxed, replicas, total: (mainPool + relaxed) * replicas });
  }
  const jobs = r.of("Job").length * MIGRATION_CONNECTIONS;
  return { rows, total: rows.reduce((sum, row) => sum + row.total, 0) + jobs };
}

/** The max_connections of the Postgres an overlay runs against, as it states it (ConfigMap toolport-config). */
function statedMaxConnections(r: Render): number | undefined {
  const map = r.of("ConfigMap").find((m) => m.metadata.name.startsWith("toolport-config"));
  const value = map?.data?.POSTGRES_MAX_CONNECTIONS;
  return value === undefined ? undefined : Number(value);
}

/** The render's migration Job (components/migration-job): its container and the roles it migrates. */
function migrationJob(r: Render): { workload: Workload; container: Container; roles: string[] } | undefined {
  for (const w of r.workloads()) {
    if (w.object.kind !== "Job") continue;
    const container = w.pod.containers.find((c) => imageName(c.image) === IMAGE && c.args?.includes("--migrate"));
    const roles = container?.args?.find((a) => a.startsWith("--roles="))?.slice("--roles=".length);
    if (container && roles) return { workload: w, container, roles: roles.split(",") };
  }
  return undefined;
}

// ---- monitoring: the metrics the code exports ----------------------------------------------------------

interface ExportedMetric {
  type: "Counter" | "Gauge" | "Histogram";
  labels: string[];
}

/** Every Prometheus metric the roles define (prom-client `new Counter|Gauge|Histogram({ name, labelNames })`). */
function exportedMetrics(): Map<string, ExportedMetric> {
  const out = new Map<string, ExportedMetric>();
  const text = [...new Set(Object.values(ROLE_DIRS)), "services/lib/kit"].map(sourceText).join("\n");
  for (const m of text.matchAll(/new (Counter|Gauge|Histogram)\(\{\s*name: "([a-z_:]+)"([\s\S]*?)\n\}\);/g)) {
    const labels = /labelNames: \[([^\]]*)\]/.exec(m[3]!)?.[1] ?? "";
    out.set(m[2]!, {
      type: m[1] as ExportedMetric["type"],
      labels: [...labels.matchAll(/"([a-z_]+)"/g)].map((l) => l[1]!),
    });
  }
  return out;
}

/** Problems of one PromQL expression against the exported metrics: unknown metrics, and labels they do not have. */
function expressionProblems(expr: string, metrics: Map<string, ExportedMetric>): string[] {
  const problems: string[] = [];
  const used: Array<{ name: string; metric: ExportedMetric }> = [];
  for (const m of expr.matchAll(/\b(toolport_[a-z_]+)(\{[^}]*\})?/g)) {
    const full = m[1]!;
    const suffix = /_(bucket|count|sum)$/.exec(full)?.[1];
    const base = suffix ? full.slice(0, -suffix.length - 1) : full;
    const metric = metrics.get(full) ?? metrics.get(base);
    if (!metric || (metrics.get(full) === undefined && metric.type !== "Histogram")) {
      problems.push(`${full}: no such metric in the code`);
      continue;
    }
    used.push({ name: full, metric });
    for (const l of (m[2] ?? "").matchAll(/([a-z_]+)\s*(?:=~|!~|!=|=)/g)) {
      if (!metric.labels.includes(l[1]!)) problems.push(`${full}: no label ${l[1]}`);
    }
  }
  // Labels an aggregation keeps must be on the metrics it aggregates (le: a histogram's buckets).
  for (const m of expr.matchAll(/\bby \(([^)]*)\)/g)) {
    for (const label of m[1]!.split(",").map((l) => l.trim())) {
      const has = used.some((u) => u.metric.labels.includes(label) || (label === "le" && u.name.endsWith("_bucket")));
      if (!has) problems.push(`by (${label}): on none of ${used.map((u) => u.name).join(", ")}`);
    }
  }
  return problems;
}

/** The RPC method names of every service (proto/schema), as the rpc metric's method label has them. */
function rpcMethods(): Set<string> {
  const root = path.join(repoRoot, "proto/schema");
  const text = readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(".proto"))
    .map((e) => readFileSync(path.join(e.parentPath, e.name), "utf8"))
    .join("\n");
  return new Set([...text.matchAll(/^\s*rpc (\w+)\(/gm)].map((m) => m[1]!));
}

// ---- checks ------------------------------------------------------------------------------------------

function allContainers(pod: PodSpec): Array<{ container: Container; init: boolean }> {
  return [
    ...(pod.initContainers ?? []).map((container) => ({ container, init: true })),
    ...pod.containers.map((container) => ({ container, init: false })),
  ];
}

function restrictedViolations(w: Workload): string[] {
  const where = `${w.object.kind}/${w.object.metadata.name}`;
  const out: string[] = [];
  const pod = w.pod;
  if (pod.hostNetwork || pod.hostPID || pod.hostIPC) out.push(`${where}: shares the host's namespaces`);
  for (const v of pod.volumes ?? []) if (v.hostPath) out.push(`${where}: hostPath volume ${v.name}`);
  for (const { container: c } of allContainers(pod)) {
    const at = `${where} container ${c.name}`;
    const sc = c.securityContext ?? {};
    const podSc = pod.securityContext ?? {};
    if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) !== true) out.push(`${at}: runAsNonRoot is not true`);
    if ((sc.runAsUser ?? podSc.runAsUser) === 0) out.push(`${at}: runs as uid 0`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${at}: allowPrivilegeEscalation is not false`);
    if (sc.privileged) out.push(`${at}: privileged`);
    if (!sc.capabilities?.drop?.includes("ALL")) out.push(`${at}: capabilities do not drop ALL`);
    if ((sc.capabilities?.add ?? []).length > 0) out.push(`${at}: adds capabilities`);
    if ((sc.seccompProfile?.type ?? podSc.seccompProfile?.type) !== "RuntimeDefault")
      out.push(`${at}: seccomp is not RuntimeDefault`);
    if (sc.readOnlyRootFilesystem !== true) out.push(`${at}: root filesystem is writable`);
    for (const kind of ["requests", "limits"] as const) {
      for (const resource of ["cpu", "memory"]) {
        if (!c.resources?.[kind]?.[resource]) out.push(`${at}: no ${resource} ${kind.slice(0, -1)}`);
      }
    }
    for (const p of c.ports ?? []) if (p.hostPort) out.push(`${at}: hostPort ${p.hostPort}`);
    const tag = c.image ? imageTag(c.image) : undefined;
    if (!c.image || !tag) out.push(`${at}: image ${c.image ?? "(none)"} has no tag`);
    else if (tag === "latest") out.push(`${at}: image ${c.image} is :latest`);
  }
  return out;
}

/** The port a probe checks, resolved to a number against the container's named ports. */
function probePort(probe: Probe, c: Container): number | undefined {
  const port = probe.grpc?.port ?? probe.httpGet?.port ?? probe.tcpSocket?.port;
  if (typeof port === "number") return port;
  return c.ports?.find((p) => p.name === port)?.containerPort;
}

function preStopSeconds(c: Container): number {
  const stop = c.lifecycle?.preStop;
  if (stop?.sleep) return stop.sleep.seconds;
  const cmd = stop?.exec?.command ?? [];
  return cmd[0] === "sleep" ? Number(cmd[1]) : 0;
}

function coversPort(ports: NetworkPolicyPort[] | undefined, port: number, protocol = "TCP", name?: string): boolean {
  if (!ports || ports.length === 0) return true;
  return ports.some((p) => {
    if ((p.protocol ?? "TCP") !== protocol) return false;
    if (p.port === undefined) return true;
    if (typeof p.port === "string") return p.port === name;
    return p.endPort ? port >= p.port && port <= p.endPort : p.port === port;
  });
}

function policiesSelecting(r: Render, labels: Labels, type: "Ingress" | "Egress"): NetworkPolicySpec[] {
  return r
    .of("NetworkPolicy")
    .map((o) => o.spec as NetworkPolicySpec)
    .filter((spec) => matchesLabels(spec.podSelector, labels))
    .filter((spec) => (spec.policyTypes ?? (spec.egress ? ["Ingress", "Egress"] : ["Ingress"])).includes(type));
}

/** Who may open connections to a workload's port: anyone, peers outside the namespace, and which roles. */
function ingressSources(r: Render, labels: Labels, port: number, roles: Map<string, Workload>) {
  const result = { isolated: false, anyone: false, outside: false, roles: new Set<string>() };
  const policies = policiesSelecting(r, labels, "Ingress");
  result.isolated = policies.length > 0;
  for (const rule of policies.flatMap((p) => p.ingress ?? [])) {
    if (!coversPort(rule.ports, port)) continue;
    if (!rule.from || rule.from.length === 0) {
      result.anyone = true;
      continue;
    }
    for (const peer of rule.from) {
      if (peer.ipBlock || peer.namespaceSelector) result.outside = true;
      else if (peer.podSelector) {
        for (const [role, w] of roles) if (matchesLabels(peer.podSelector, w.labels)) result.roles.add(role);
      }
    }
  }
  return result;
}

/** Whether a workload's egress policies let it reach `port` on the peer `accepts` approves of. */
function egressAllows(
  r: Render,
  labels: Labels,
  port: number,
  protocol: string,
  accepts: (peer: NetworkPolicyPeer) => boolean,
): boolean {
  const policies = policiesSelecting(r, labels, "Egress");
  if (policies.length === 0) return true;
  return policies
    .flatMap((p) => p.egress ?? [])
    .some((rule) => coversPort(rule.ports, port, protocol) && (!rule.to || rule.to.length === 0 || rule.to.some(accepts)));
}

const samePodsAs = (target: Labels) => (peer: NetworkPolicyPeer) =>
  !peer.namespaceSelector && !peer.ipBlock && peer.podSelector !== undefined && matchesLabels(peer.podSelector, target);

const theInternet = (peer: NetworkPolicyPeer) => peer.ipBlock?.cidr === "0.0.0.0/0";

// ---- the tests ---------------------------------------------------------------------------------------

const renderNames = listRenders();

describe("the Kubernetes manifests (deploy/k8s), rendered with kubectl kustomize", () => {
  const renders = new Map<string, Render>();
  let facts: Map<string, RoleFacts>;
  let imageUser: number;

  beforeAll(() => {
    requireKubectl();
    for (const name of renderNames) renders.set(name, render(path.join(k8sDir, name)));
    facts = roleFacts();
    // The runtime stage's user: the last USER of the Dockerfile.
    const users = [...readFileSync(path.join(repoRoot, "deploy/Dockerfile"), "utf8").matchAll(/^USER\s+(\d+)/gm)];
    imageUser = Number(users.at(-1)?.[1]);
  });

  it("knows every role the image hosts, and reads their ports, calls and settings from the code", () => {
    const host = readFileSync(path.join(repoRoot, "services/host/src/roles.ts"), "utf8");
    const hosted = [...host.matchAll(/from "@toolport\/([\w-]+)\/role"/g)].map((m) => m[1]).sort();
    expect(hosted).toEqual([...ROLE_NAMES].sort());
    expect(renderNames).toEqual(expect.arrayContaining(["overlays/dev", "overlays/production"]));
    for (const f of facts.values()) expect(f.port, f.name).toBeGreaterThan(0);
    expect(facts.get("gateway")!.calls).toEqual(["billing", "catalog", "content", "execution", "identity", "webhooks"]);
    expect(facts.get("mcp-server")!.calls).toEqual(["gateway"]);
    expect(facts.get("catalog")!.secrets).toContain("CATALOG_SECRET_KEY");
    for (const key of MUST_BE_SET)
      expect(
        [...facts.values()].some((f) => f.secrets.includes(key)),
        key,
      ).toBe(true);
    expect(imageUser).toBeGreaterThan(0);
  });

  it("counts connections as the code opens them: the base's defaults at its HPA maxima exceed Postgres's default 100", () => {
    const base = connectionBudget(renders.get("base")!, facts);
    const execution = base.rows.find((row) => row.role === "execution")!;
    // 10 (main pool) + 4 (its relaxed pool, execution/src/routes.ts), at 10 replicas + 3 of surge.
    expect(execution).toEqual({ role: "execution", perReplica: 14, replicas: 13, total: 182 });
    expect(base.total).toBeGreaterThan(100);
  });

  describe.each(renderNames)("%s", (name) => {
    const r = () => renders.get(name)!;
    const isDev = name.startsWith("overlays/dev");
    const isBase = name === "base";

    it("runs every container under the restricted Pod Security Standard, with resources and a pinned image", () => {
      const violations = r().workloads().flatMap(restrictedViolations);
      expect(violations).toEqual([]);
      expect(r().workloads().length).toBeGreaterThan(0);
    });

    it("runs each role in a Deployment of its own, from the Toolport image, as the image's user, with probes", () => {
      const roles = r().roles();
      expect([...roles.keys()].sort()).toEqual([...ROLE_NAMES].sort());
      const tags = new Set<string>();
      const problems: string[] = [];
      for (const [role, w] of roles) {
        const f = facts.get(role)!;
        const at = `${role} (${w.object.kind}/${w.object.metadata.name})`;
        const main = w.pod.containers.find((c) => imageName(c.image) === IMAGE)!;
        if (w.object.kind !== "Deployment") problems.push(`${at}: not a Deployment`);
        if (w.labels["app.kubernetes.io/component"] !== role) problems.push(`${at}: pod label component is not ${role}`);
        if (JSON.stringify(main.args) !== JSON.stringify([`--roles=${role}`])) problems.push(`${at}: args ${main.args}`);
        tags.add(imageTag(main.image!)!);
        // Its own port first (PORT is read from it below), then the metrics port (METRICS_PORT).
        const ports = (main.ports ?? []).map((p) => `${p.name}:${p.containerPort}`);
        const metricsPort = r().value(r().env(main).get("METRICS_PORT"));
        const expected = [`${f.kind === "service" ? "grpc" : "http"}:${f.port}`, `metrics:${metricsPort}`];
        if (JSON.stringify(ports) !== JSON.stringify(expected)) problems.push(`${at}: container ports ${ports}, not ${expected}`);

        // Probes: gRPC health on the services' own port; HTTP or TCP on the edge's.
        for (const kind of ["readinessProbe", "livenessProbe", "startupProbe"] as const) {
          const probe = main[kind];
          if (!probe) {
            if (kind !== "startupProbe") problems.push(`${at}: no ${kind}`);
            continue;
          }
          if (probePort(probe, main) !== f.port) problems.push(`${at}: ${kind} is not on port ${f.port}`);
          if (f.kind === "service" && !probe.grpc) problems.push(`${at}: ${kind} is not a grpc probe`);
          // Readiness looks at the database (and NATS for a consumer); liveness stays cheap (the process).
          const wanted = kind === "readinessProbe" ? "toolport.readiness" : undefined;
          if (f.kind === "service" && probe.grpc && probe.grpc.service !== wanted) {
            problems.push(`${at}: ${kind} checks "${probe.grpc.service ?? ""}", not "${wanted ?? ""}"`);
          }
        }
        if (role === "gateway") {
          // /v1/health is 503 while any service is down: as a probe it would take every gateway out of its
          // Service (and restarting it would not help). /livez checks only the process; /readyz also that
          // it is not draining.
          for (const kind of ["livenessProbe", "startupProbe"] as const) {
            if (main[kind]?.httpGet?.path !== "/livez") problems.push(`${at}: ${kind} is not GET /livez`);
          }
          if (main.readinessProbe?.httpGet?.path !== "/readyz") problems.push(`${at}: readinessProbe is not GET /readyz`);
        }
        if (role === "mcp-server" && main.readinessProbe?.httpGet?.path !== "/mcp/health") {
          problems.push(`${at}: readiness is not GET /mcp/health`);
        }

        // The services migrate before the new version starts: in an init container of their own pod, from
        // the same image, or (components/migration-job) in a Job with a credential of its own.
        if (f.kind === "service") {
          const migrate = w.pod.initContainers?.find((c) => c.args?.includes("--migrate"));
          const job = migrationJob(r());
          if (migrate && job)
            problems.push(`${at}: migrates in an init container and in Job ${job.workload.object.metadata.name}`);
          else if (job) {
            if (!job.roles.includes(role)) problems.push(`${at}: the migration Job does not migrate it (${job.roles})`);
            if (imageName(job.container.image) !== IMAGE || imageTag(job.container.image!) !== imageTag(main.image!))
              problems.push(`${at}: the migration Job runs ${job.container.image}, not ${main.image}`);
            const runtime = r().env(main).get("DATABASE_URL");
            const migration = r().env(job.container).get("DATABASE_URL");
            if (migration?.from !== "secret" || migration.optional) problems.push(`${at}: the Job has no DATABASE_URL Secret`);
            else if (runtime?.from === "secret" && runtime.name === migration.name)
              problems.push(`${at}: the Job migrates with the runtime credential (Secret ${runtime.name})`);
          } else if (!migrate) problems.push(`${at}: no init container with --migrate, and no migration Job`);
          else {
            if (JSON.stringify(migrate.args) !== JSON.stringify([`--roles=${role}`, "--migrate"])) {
              problems.push(`${at}: migrate args ${migrate.args}`);
            }
            if (migrate.image !== main.image) problems.push(`${at}: init image ${migrate.image} is not ${main.image}`);
            const env = r().env(migrate);
            if (env.get("DATABASE_URL")?.from !== "secret") problems.push(`${at}: the init container has no DATABASE_URL Secret`);
          }
        }

        // The image's user, no API token, a writable /tmp on a read-only root.
        const uid = main.securityContext?.runAsUser ?? w.pod.securityContext?.runAsUser;
        if (uid !== imageUser) problems.push(`${at}: runs as ${uid}, not the image's user ${imageUser}`);
        if (w.pod.automountServiceAccountToken !== false) problems.push(`${at}: mounts a service account token`);
        const account = r().find("ServiceAccount", w.pod.serviceAccountName ?? "default");
        if (!account) problems.push(`${at}: service account ${w.pod.serviceAccountName} is not in the render`);
        else if (account.automountServiceAccountToken !== false) problems.push(`${at}: its ServiceAccount automounts a token`);
        for (const { container: c } of allContainers(w.pod)) {
          const tmp = c.volumeMounts?.find((m) => m.mountPath === "/tmp");
          const volume = w.pod.volumes?.find((v) => v.name === tmp?.name);
          if (!volume?.emptyDir) problems.push(`${at}: container ${c.name} has no emptyDir at /tmp`);
        }
        if (!(w.pod.topologySpreadConstraints ?? []).some((t) => t.labelSelector && matchesLabels(t.labelSelector, w.labels))) {
          problems.push(`${at}: no topologySpreadConstraints over its own pods`);
        }

        // SIGTERM comes after preStop; the drain then takes up to SHUTDOWN_GRACE_MS.
        const graceValue = r().value(r().env(main).get("SHUTDOWN_GRACE_MS"));
        const drainMs = graceValue === undefined ? f.shutdownGraceMs : Number(graceValue);
        const neededMs = drainMs + preStopSeconds(main) * 1000;
        const periodMs = (w.pod.terminationGracePeriodSeconds ?? 30) * 1000;
        if (!(periodMs > neededMs))
          problems.push(`${at}: terminationGracePeriodSeconds ${periodMs / 1000} s <= ${neededMs / 1000} s`);
      }
      expect(problems).toEqual([]);
      expect(tags.size, `one image tag for every role: ${[...tags]}`).toBe(1);
    });

    it("gives each role every variable it needs: HOST, PORT, Postgres and NATS, the address of each role it calls", () => {
      const problems: string[] = [];
      for (const [role, w] of r().roles()) {
        const f = facts.get(role)!;
        const main = w.pod.containers.find((c) => imageName(c.image) === IMAGE)!;
        const env = r().env(main);
        const value = (key: string) => r().value(env.get(key));
        // One role per process: it listens on PORT (<ROLE>_PORT is read only by a process hosting several).
        if (value("PORT") !== String(main.ports?.[0]?.containerPort)) problems.push(`${role}: PORT is ${value("PORT")}`);
        if (!["0.0.0.0", "::"].includes(value("HOST") ?? "")) problems.push(`${role}: HOST is ${value("HOST")}, not 0.0.0.0`);
        if (f.kind === "service") {
          for (const key of ["DATABASE_URL", "NATS_URL"]) {
            const source = env.get(key);
            if (source?.from !== "secret" || source.optional) problems.push(`${role}: ${key} is not a required Secret reference`);
          }
        }
        for (const callee of f.calls) {
          const key = `${callee.toUpperCase()}_URL`;
          const url = value(key);
          if (!url) {
            problems.push(`${role}: calls ${callee} but ${key} is not set`);
            continue;
          }
          const at = r().serviceAt(url);
          const backends = at ? r().backends(at.service, at.port) : [];
          const callees = backends.filter((b) => b.workload.object === r().roles().get(callee)!.object);
          if (!at || callees.length === 0) problems.push(`${role}: ${key}=${url} is not a Service of ${callee} in the render`);
          else if (callees[0]!.containerPort !== facts.get(callee)!.port) {
            problems.push(`${role}: ${key}=${url} does not reach ${callee}'s port ${facts.get(callee)!.port}`);
          }
        }
        // Every secret setting the role reads comes from a Secret.
        for (const key of f.secrets) {
          const source = env.get(key);
          if (source?.from !== "secret") problems.push(`${role}: secret setting ${key} is not a secretKeyRef`);
          else if (MUST_BE_SET.includes(key) && source.optional) problems.push(`${role}: ${key} must not be optional`);
        }
        // Referenced Secrets: in the render (and holding every required key), or ones the operator creates.
        for (const { container: c } of allContainers(w.pod)) {
          for (const [key, source] of r().env(c)) {
            if (source.from !== "secret") continue;
            const secret = r().find("Secret", source.name);
            if (!secret && !OPERATOR_SECRETS.has(source.name))
              problems.push(`${role}: ${key} names Secret ${source.name}, unknown`);
            if (secret && !source.optional && secretValue(secret, source.key) === undefined) {
              problems.push(`${role}: ${key}: Secret ${source.name} has no key ${source.key}`);
            }
          }
        }
      }
      expect(problems).toEqual([]);
    });

    it("holds no secret literal: secret settings come from Secrets, and Secrets are only generated in development", () => {
      const problems: string[] = [];
      for (const w of r().workloads()) {
        for (const { container: c } of allContainers(w.pod)) {
          for (const e of c.env ?? []) {
            if (SECRET_NAME.test(e.name) && e.value !== undefined) {
              problems.push(`${w.object.metadata.name}/${c.name}: ${e.name} has a literal value`);
            }
          }
        }
      }
      for (const map of r().of("ConfigMap")) {
        for (const key of Object.keys(map.data ?? {})) {
          if (SECRET_NAME.test(key)) problems.push(`ConfigMap ${map.metadata.name}: ${key} belongs in a Secret`);
        }
      }
      const secrets = r().of("Secret");
      if (!isDev) {
        for (const s of secrets) problems.push(`Secret ${s.metadata.name}: the operator creates Secrets outside ${name}`);
      } else {
        // Development placeholders only: each value says so, or is a URL without a password.
        for (const s of secrets) {
          for (const key of Object.keys({ ...s.data, ...s.stringData })) {
            const v = secretValue(s, key)!;
            const hex = /^[0-9a-f]+$/i.test(v) ? Buffer.from(v, "hex").toString("utf8") : "";
            const plainUrl = /^[a-z]+:\/\//.test(v) && !new URL(v).password;
            if (!v.includes("dev-only") && !hex.includes("dev-only") && !plainUrl) {
              problems.push(`Secret ${s.metadata.name}: ${key} is not an obvious development placeholder`);
            }
          }
        }
      }
      expect(problems).toEqual([]);
    });

    it("has Services that select pods of this render, on container ports they have", () => {
      const problems: string[] = [];
      for (const service of r().of("Service")) {
        for (const port of (service.spec as { ports: ServicePort[] }).ports) {
          const backends = r().backends(service, port);
          if (backends.length === 0) problems.push(`Service ${service.metadata.name}: selects no pods`);
          for (const b of backends) {
            if (b.containerPort === undefined) {
              problems.push(
                `Service ${service.metadata.name}: targetPort ${port.targetPort} is not a port of ${b.workload.object.metadata.name}`,
              );
            }
          }
        }
      }
      expect(problems).toEqual([]);
      expect(r().of("Service").length).toBeGreaterThanOrEqual(ROLE_NAMES.length);
    });

    it("has PodDisruptionBudgets and autoscalers for Deployments of this render", () => {
      const problems: string[] = [];
      const deployments = r()
        .workloads()
        .filter((w) => w.object.kind === "Deployment");
      for (const pdb of r().of("PodDisruptionBudget")) {
        const spec = pdb.spec as { selector: LabelSelector; minAvailable?: number | string };
        const targets = deployments.filter((w) => matchesLabels(spec.selector, w.labels));
        if (targets.length === 0) problems.push(`PodDisruptionBudget ${pdb.metadata.name}: selects no Deployment`);
      }
      for (const hpa of r().of("HorizontalPodAutoscaler")) {
        const spec = hpa.spec as { scaleTargetRef: { kind: string; name: string }; minReplicas?: number; maxReplicas: number };
        if (hpa.apiVersion !== "autoscaling/v2")
          problems.push(`HorizontalPodAutoscaler ${hpa.metadata.name}: not autoscaling/v2`);
        if (spec.scaleTargetRef.kind !== "Deployment" || !r().find("Deployment", spec.scaleTargetRef.name)) {
          problems.push(`HorizontalPodAutoscaler ${hpa.metadata.name}: ${spec.scaleTargetRef.name} is not a Deployment here`);
        }
        if ((spec.minReplicas ?? 1) > spec.maxReplicas) problems.push(`HorizontalPodAutoscaler ${hpa.metadata.name}: min > max`);
      }
      for (const [role, w] of r().roles()) {
        if (
          !r()
            .of("PodDisruptionBudget")
            .some((p) => matchesLabels((p.spec as { selector: LabelSelector }).selector, w.labels))
        ) {
          problems.push(`${role}: no PodDisruptionBudget`);
        }
      }
      if (!isDev) {
        const scaled = r()
          .of("HorizontalPodAutoscaler")
          .map((h) => (h.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name);
        for (const role of ["gateway", "mcp-server", "execution", "catalog"]) {
          const deployment = r().roles().get(role)!.object.metadata.name;
          if (!scaled.includes(deployment)) problems.push(`${role}: no HorizontalPodAutoscaler`);
        }
      }
      expect(problems).toEqual([]);
    });

    // Not for the base: it states no max_connections (an overlay says which Postgres it runs against). The
    // test "counts connections as the code opens them" shows the base's default pools would exceed 100.
    it.skipIf(isBase)(
      "fits its worst case of Postgres connections (HPA maxima with surge x pool sizes) in the max_connections it states",
      () => {
        const max = statedMaxConnections(r());
        expect(max, "POSTGRES_MAX_CONNECTIONS in the overlay's config.env").toBeGreaterThan(0);
        const budget = connectionBudget(r(), facts);
        expect(budget.rows.map((row) => row.role).sort()).toEqual(
          ROLE_NAMES.filter((n) => facts.get(n)!.kind === "service").sort(),
        );
        const table = budget.rows.map((row) => `${row.role}: ${row.replicas} x ${row.perReplica} = ${row.total}`).join("; ");
        expect(budget.total + RESERVED_CONNECTIONS, `${table}; with ${RESERVED_CONNECTIONS} reserved`).toBeLessThanOrEqual(max!);
        // Where the render runs its own Postgres (development), it is started with that limit.
        for (const set of r().of("StatefulSet")) {
          const postgres = (set.spec as { template: { spec: PodSpec } }).template.spec.containers.find(
            (c) => imageName(c.image) === "postgres",
          );
          if (postgres)
            expect(postgres.args ?? [], "the Postgres StatefulSet's max_connections").toContain(`max_connections=${max}`);
        }
      },
    );

    it("isolates every role: the edge takes traffic from outside, each service only from its callers", () => {
      const problems: string[] = [];
      const roles = r().roles();
      for (const [role, w] of roles) {
        const f = facts.get(role)!;
        const sources = ingressSources(r(), w.labels, f.port, roles);
        if (!sources.isolated) problems.push(`${role}: no NetworkPolicy isolates its ingress`);
        if (policiesSelecting(r(), w.labels, "Egress").length === 0)
          problems.push(`${role}: no NetworkPolicy isolates its egress`);
        const callers = ROLE_NAMES.filter((c) => facts.get(c)!.calls.includes(role)).sort();
        if (f.kind === "edge") {
          if (!sources.anyone) problems.push(`${role}: does not take traffic from outside the namespace`);
        } else {
          if (sources.anyone || sources.outside) problems.push(`${role}: takes traffic from outside its callers`);
          const allowed = [...sources.roles].sort();
          if (JSON.stringify(allowed) !== JSON.stringify(callers)) {
            problems.push(`${role}: admits ${allowed.join(", ") || "nobody"}, its callers are ${callers.join(", ") || "nobody"}`);
          }
        }
        // Egress: names, each role it calls, and for the services Postgres, NATS and, where they call out, the internet.
        if (!egressAllows(r(), w.labels, 53, "UDP", () => true)) problems.push(`${role}: cannot resolve names (UDP 53)`);
        for (const callee of f.calls) {
          if (!egressAllows(r(), w.labels, facts.get(callee)!.port, "TCP", samePodsAs(roles.get(callee)!.labels))) {
            problems.push(`${role}: cannot reach ${callee} (egress)`);
          }
        }
        if (f.kind === "service") {
          for (const [what, port] of [
            ["Postgres", 5432],
            ["NATS", 4222],
          ] as const) {
            if (!egressAllows(r(), w.labels, port, "TCP", () => true)) problems.push(`${role}: cannot reach ${what} (${port})`);
          }
        }
        if (f.outbound && !egressAllows(r(), w.labels, 443, "TCP", theInternet)) {
          problems.push(`${role}: cannot reach the internet (its upstreams)`);
        }
      }
      // Postgres and NATS in the namespace (development) take the services' connections.
      for (const service of r().of("Service")) {
        for (const port of (service.spec as { ports: ServicePort[] }).ports) {
          if (port.port !== 5432 && port.port !== 4222) continue;
          for (const b of r().backends(service, port)) {
            const sources = ingressSources(r(), b.workload.labels, b.containerPort ?? port.port, roles);
            for (const role of ROLE_NAMES.filter((n) => facts.get(n)!.kind === "service")) {
              if (sources.isolated && !sources.anyone && !sources.roles.has(role)) {
                problems.push(`${service.metadata.name}: does not admit ${role}`);
              }
            }
          }
        }
      }
      expect(problems).toEqual([]);
    });

    it("serves every role's metrics on METRICS_PORT, announced to Prometheus and open to scrapers only there", () => {
      const problems: string[] = [];
      const roles = r().roles();
      for (const [role, w] of roles) {
        const main = w.pod.containers.find((c) => imageName(c.image) === IMAGE)!;
        const port = Number(r().value(r().env(main).get("METRICS_PORT")));
        if (!Number.isInteger(port) || port <= 0) {
          problems.push(`${role}: METRICS_PORT is not set`);
          continue;
        }
        if (port === facts.get(role)!.port) problems.push(`${role}: metrics on the role's own port`);
        const annotations = (w.object.spec as { template: { metadata: { annotations?: Record<string, string> } } }).template
          .metadata.annotations;
        if (annotations?.["prometheus.io/scrape"] !== "true") problems.push(`${role}: no prometheus.io/scrape annotation`);
        if (annotations?.["prometheus.io/port"] !== String(port)) problems.push(`${role}: prometheus.io/port is not ${port}`);
        if (annotations?.["prometheus.io/path"] !== "/metrics") problems.push(`${role}: prometheus.io/path is not /metrics`);
        // A scraper runs in another namespace (the operator labels it): admitted on the metrics port...
        const sources = ingressSources(r(), w.labels, port, roles);
        if (!sources.outside && !sources.anyone) problems.push(`${role}: no scraper may reach port ${port}`);
        // ...and that rule opens nothing else: a service still takes its own port only from its callers.
        const scrapeRules = policiesSelecting(r(), w.labels, "Ingress")
          .flatMap((p) => p.ingress ?? [])
          .filter((rule) => rule.from?.some((peer) => peer.namespaceSelector?.matchLabels?.["toolport.dev/metrics-scraper"]));
        if (scrapeRules.length === 0) problems.push(`${role}: no rule admits namespaces labelled toolport.dev/metrics-scraper`);
        for (const rule of scrapeRules) {
          if (!rule.ports || rule.ports.some((p) => p.port !== port))
            problems.push(`${role}: the scraper rule opens more than ${port}`);
        }
      }
      expect(problems).toEqual([]);
    });

    if (name.startsWith("overlays/production")) {
      it("runs at least two replicas of every role, with external Postgres and NATS", () => {
        const problems: string[] = [];
        const hpas = r().of("HorizontalPodAutoscaler");
        for (const [role, w] of r().roles()) {
          const replicas = (w.object.spec as { replicas?: number }).replicas;
          const hpa = hpas.find(
            (h) => (h.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name === w.object.metadata.name,
          );
          const minimum = (hpa?.spec as { minReplicas?: number } | undefined)?.minReplicas;
          if (replicas === undefined && minimum === undefined) problems.push(`${role}: replicas unset and no autoscaler`);
          if (replicas !== undefined && replicas < 2) problems.push(`${role}: ${replicas} replica(s)`);
          if (hpa && (minimum ?? 1) < 2) problems.push(`${role}: autoscaler minimum ${minimum ?? 1}`);
        }
        expect(r().of("StatefulSet"), "Postgres and NATS are external in production").toEqual([]);

        expect(problems).toEqual([]);
      });

      it("routes at the edge every path the gateway and the MCP server serve to the outside, and no probe or metrics", () => {
        const routes: IngressRoute[] = [];
        const ingresses = r().of("Ingress");
        for (const ingress of ingresses) {
          const spec = ingress.spec as {
            rules?: Array<{
              http?: {
                paths: Array<{
                  path: string;
                  pathType: string;
                  backend: { service: { name: string; port: { number?: number; name?: string } } };
                }>;
              };
            }>;
          };
          for (const rule of spec.rules ?? []) {
            for (const p of rule.http?.paths ?? []) {
              const port = p.backend.service.port;
              routes.push({
                path: p.path,
                pathType: p.pathType,
                service: p.backend.service.name,
                port: port.number ?? port.name!,
              });
            }
          }
        }
        const gateway = gatewayPaths();
        // The two routers the gateway has (/v1 and the authorization server's); a third is a new set of paths.
        expect(gateway.routers, "routers in gateway/src: list a new one's routes in gatewayPaths()").toBe(2);
        // Not vacuous: what the platform team found missing is among the derived paths.
        expect(gateway.paths).toEqual(
          expect.arrayContaining([
            "/console",
            "/checkout/success",
            "/checkout/cancelled",
            "/docs",
            "/llms.txt",
            "/v1/oauth/callback",
            "/oauth/authorize",
            "/.well-known/oauth-authorization-server",
          ]),
        );
        const wanted = [
          ...gateway.paths.map((p) => ({ path: p, role: "gateway" })),
          ...mcpPaths().map((p) => ({ path: p, role: "mcp-server" })),
          { path: "/", role: "gateway" },
        ];
        const problems: string[] = [];
        for (const { path: requestPath, role } of wanted) {
          const route = ingressRouteFor(routes, requestPath);
          if (requestPath in INTERNAL_PATHS) {
            if (route && requestPath !== "/mcp/health")
              problems.push(`Ingress: routes ${requestPath} (${INTERNAL_PATHS[requestPath]})`);
            continue;
          }
          const service = route && r().find("Service", route.service);
          const port = (service?.spec as { ports?: ServicePort[] } | undefined)?.ports?.find(
            (p) => p.port === route?.port || p.name === route?.port,
          );
          const backend = service && port ? r().backends(service, port) : [];
          if (
            !backend.some((b) => b.workload.object === r().roles().get(role)!.object && b.containerPort === facts.get(role)!.port)
          ) {
            problems.push(`Ingress: ${requestPath} does not route to the ${role}${route ? ` (it takes ${route.path})` : ""}`);
          }
        }
        expect(problems).toEqual([]);

        // Bodies as large as publishing takes, and time for it, on every Ingress that routes /v1.
        const env = new Map(
          [...r().env(r().roles().get("gateway")!.pod.containers[0]!)].map(([k, v]) => [k, r().value(v) ?? ""] as const),
        );
        const config = loadGatewayConfig(Object.fromEntries(env));
        for (const ingress of ingresses) {
          const annotations = (ingress.metadata as { annotations?: Record<string, string> }).annotations ?? {};
          const size = nginxSize(annotations["nginx.ingress.kubernetes.io/proxy-body-size"]);
          expect(size, `${ingress.metadata.name}: proxy-body-size`).toBeGreaterThanOrEqual(config.PUBLISH_BODY_LIMIT_BYTES);
          for (const key of ["proxy-read-timeout", "proxy-send-timeout"]) {
            const seconds = Number(annotations[`nginx.ingress.kubernetes.io/${key}`]);
            expect(seconds * 1000, `${ingress.metadata.name}: ${key}`).toBeGreaterThan(config.PUBLISH_TIMEOUT_MS);
          }
        }
        expect(problems).toEqual([]);
      });
    }

    it("alerts only on metrics and labels the code exports, and scrapes every role's metrics port", () => {
      const rules = r().of("PrometheusRule");
      const monitors = r().of("PodMonitor");
      if (rules.length === 0 && monitors.length === 0) return; // components/monitoring is not in this render
      const problems: string[] = [];
      const metrics = exportedMetrics();
      const methods = rpcMethods();
      const alerts: Array<{ alert: string; expr: string }> = [];
      for (const rule of rules) {
        const groups = (rule.spec as { groups: Array<{ name: string; rules: Array<Record<string, unknown>> }> }).groups;
        for (const group of groups) {
          for (const item of group.rules) {
            const expr = String(item.expr);
            const alert = String(item.alert);
            alerts.push({ alert, expr });
            for (const p of expressionProblems(expr, metrics)) problems.push(`${alert}: ${p}`);
            // Method names in a matcher are RPCs that exist (a misspelt one would silently match nothing).
            for (const m of expr.matchAll(/method(?:=~|!~)"([^"]*)"/g)) {
              for (const name of m[1]!.split("|")) if (!methods.has(name)) problems.push(`${alert}: no RPC method ${name}`);
            }
            const labels = (item.labels ?? {}) as Record<string, string>;
            const annotations = (item.annotations ?? {}) as Record<string, string>;
            if (!["critical", "warning", "info"].includes(labels.severity ?? "")) problems.push(`${alert}: no severity`);
            if (!annotations.summary || !annotations.description) problems.push(`${alert}: no summary and description`);
            let depth = 0;
            for (const ch of expr) {
              depth += ch === "(" ? 1 : ch === ")" ? -1 : 0;
              if (depth < 0) break;
            }
            if (depth !== 0) problems.push(`${alert}: unbalanced parentheses`);
          }
        }
      }
      // What the alerts are for: the gateway's error rate, a p99, outbox lag, webhook backlog, redeliveries.
      for (const [what, pattern] of [
        ["error rate", /toolport_http_request_duration_seconds_count\{[^}]*status=~"5\.\."/],
        ["p99", /histogram_quantile\(0\.99, .*toolport_rpc_server_duration_seconds_bucket/s],
        ["outbox lag", /toolport_outbox_publish_lag_seconds_bucket/],
        ["webhook backlog", /toolport_webhook_(oldest_due_seconds|deliveries_due)/],
        ["consumer redeliveries", /toolport_consumer_redeliveries_total/],
      ] as const) {
        if (!alerts.some((a) => pattern.test(a.expr))) problems.push(`no alert on ${what}`);
      }
      // The PodMonitor selects every role's pods, on the port their main container names "metrics".
      for (const [role, w] of r().roles()) {
        const main = w.pod.containers.find((c) => imageName(c.image) === IMAGE)!;
        const scraped = monitors.some((m) => {
          const spec = m.spec as { selector: LabelSelector; podMetricsEndpoints: Array<{ port?: string; path?: string }> };
          return (
            matchesLabels(spec.selector, w.labels) &&
            spec.podMetricsEndpoints.some(
              (e) => (main.ports ?? []).some((p) => p.name === e.port) && (e.path ?? "/metrics") === "/metrics",
            )
          );
        });
        if (!scraped) problems.push(`${role}: no PodMonitor scrapes its metrics port`);
      }
      expect(alerts.length).toBeGreaterThan(0);
      expect(problems).toEqual([]);
    });

    it("gives the services NATS credential and CA files from a mounted Secret where it names them", () => {
      const problems: string[] = [];
      for (const [role, w] of r().roles()) {
        if (facts.get(role)!.kind !== "service") continue;
        const main = w.pod.containers.find((c) => imageName(c.image) === IMAGE)!;
        const env = r().env(main);
        for (const key of ["NATS_CREDS_FILE", "NATS_NKEY_SEED_FILE", "NATS_CA_FILE"]) {
          const file = r().value(env.get(key));
          if (file === undefined) continue;
          const mount = main.volumeMounts?.find((m) => file.startsWith(`${m.mountPath}/`));
          const volume = w.pod.volumes?.find((v) => v.name === mount?.name);
          if (!volume?.secret) problems.push(`${role}: ${key}=${file} is not in a mounted Secret`);
          else if (!OPERATOR_SECRETS.has(volume.secret.secretName) && !r().find("Secret", volume.secret.secretName))
            problems.push(`${role}: ${key} comes from Secret ${volume.secret.secretName}, unknown`);
        }
        if (name.startsWith("overlays/production")) {
          const value = (key: string) => Number(r().value(env.get(key)));
          if (!(value("NATS_STREAM_REPLICAS") >= 3)) problems.push(`${role}: the stream has fewer than 3 copies`);
          if (!(value("NATS_STREAM_MAX_AGE_S") > 0)) problems.push(`${role}: the stream's max age is unbounded`);
          if (!(value("NATS_STREAM_MAX_BYTES") > 0)) problems.push(`${role}: the stream's size is unbounded`);
        }
      }
      expect(problems).toEqual([]);
    });

    if (isDev) {
      it("runs one replica of every role, no autoscaler, and Postgres and NATS (JetStream) in the namespace", () => {
        const problems: string[] = [];
        for (const [role, w] of r().roles()) {
          const replicas = (w.object.spec as { replicas?: number }).replicas ?? 1;
          if (replicas !== 1) problems.push(`${role}: ${replicas} replicas`);
        }
        for (const hpa of r().of("HorizontalPodAutoscaler")) {
          if (((hpa.spec as { minReplicas?: number }).minReplicas ?? 1) > 1)
            problems.push(`${hpa.metadata.name}: minimum above 1`);
        }
        const images = r()
          .of("StatefulSet")
          .flatMap((s) => (s.spec as { template: { spec: PodSpec } }).template.spec.containers);
        const postgres = images.find((c) => imageName(c.image) === "postgres");
        const nats = images.find((c) => imageName(c.image) === "nats");
        if (!postgres || !/^15\.\d+/.test(imageTag(postgres.image!)!))
          problems.push(`no Postgres 15.x StatefulSet: ${postgres?.image}`);
        if (!nats || !/^2\.\d+/.test(imageTag(nats.image!)!)) problems.push(`no NATS 2.x StatefulSet: ${nats?.image}`);
        if (nats && !(nats.args ?? []).some((a) => a === "-js" || a === "--jetstream"))
          problems.push("NATS runs without JetStream");

        // The services' DATABASE_URL and NATS_URL point at those, through their Services.
        const catalog = r().roles().get("catalog")!;
        const env = r().env(catalog.pod.containers[0]!);
        for (const [key, image] of [
          ["DATABASE_URL", "postgres"],
          ["NATS_URL", "nats"],
        ] as const) {
          const url = r().value(env.get(key));
          const at = url ? r().serviceAt(url) : undefined;
          const backends = at ? r().backends(at.service, at.port) : [];
          if (!backends.some((b) => b.workload.pod.containers.some((c) => imageName(c.image) === image) && b.containerPort)) {
            problems.push(`${key}=${url} is not the ${image} StatefulSet's Service`);
          }
        }
        expect(problems).toEqual([]);
      });

      // Meilisearch is optional in development: overlays/dev-search adds components/meilisearch.
      it(`gives the catalog ${name === "overlays/dev-search" ? "a Meilisearch in the namespace, with its key" : "no Meilisearch (its built-in engine)"}`, () => {
        const catalog = r().roles().get("catalog")!;
        const env = r().env(catalog.pod.containers.find((c) => imageName(c.image) === IMAGE)!);
        const url = r().value(env.get("MEILI_URL"));
        if (name !== "overlays/dev-search") {
          expect(url).toBeUndefined();
          return;
        }
        const at = url ? r().serviceAt(url) : undefined;
        expect(at, `MEILI_URL=${url} names a Service of the render`).toBeDefined();
        const backend = r()
          .backends(at!.service, at!.port)
          .find((b) => b.workload.pod.containers.some((c) => imageName(c.image) === "getmeili/meilisearch") && b.containerPort);
        expect(backend, "the Service sends to the Meilisearch StatefulSet").toBeDefined();
        const meili = backend!.workload.pod.containers.find((c) => imageName(c.image) === "getmeili/meilisearch")!;
        // The catalog calls with the master key Meilisearch starts with.
        expect(r().value(env.get("MEILI_KEY"))).toBeTruthy();
        expect(r().value(r().env(meili).get("MEILI_MASTER_KEY"))).toBe(r().value(env.get("MEILI_KEY")));
        // Only the catalog may reach it.
        const sources = ingressSources(r(), backend!.workload.labels, 7700, r().roles());
        expect([...sources.roles]).toEqual(["catalog"]);
        expect(sources.anyone || sources.outside).toBe(false);
      });
    }

    if (isBase) {
      it("leaves the namespace to the overlays", () => {
        expect(r().objects.filter((o) => o.metadata.namespace !== undefined || o.kind === "Namespace")).toEqual([]);
      });
    } else {
      it("puts everything in one namespace, which enforces the restricted Pod Security Standard", () => {
        const namespaces = r().of("Namespace");
        expect(namespaces).toHaveLength(1);
        const ns = namespaces[0]!;
        expect(ns.metadata.labels?.["pod-security.kubernetes.io/enforce"]).toBe("restricted");
        const outside = r().objects.filter((o) => o.kind !== "Namespace" && o.metadata.namespace !== ns.metadata.name);
        expect(outside.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([]);
      });
    }
  });
});
