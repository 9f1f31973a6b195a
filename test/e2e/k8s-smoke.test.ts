/**
 * The dev overlay's manifests wire a working system, without a cluster: the overlay is rendered
 * (test/harness/k8s.ts), every Deployment whose container runs the Toolport image is started locally as
 * a cluster would start its pod (test/harness/k8s-local.ts), each container's probes are run as the
 * kubelet runs them, and a register -> publish -> search -> call -> read-back round trip goes through the
 * gateway's Service address (and a search and a read-back through the MCP server's, which calls the
 * gateway's), then shows up in the gateway's and execution's metrics. kubectl 1.27 or newer must be on
 * PATH (the render); the workspace must be built (processes run dist/, as the test command builds first).
 *
 * Kept exactly as the manifest says:
 * - the image's entry point (deploy/Dockerfile: ENTRYPOINT `node /app/dist/main.js`, /app being the
 *   deployed @toolport/host package, here its folder in the built workspace; the runtime stage's ENV);
 * - each container's args (`--roles=<role>`, and `--migrate` for the init containers, which run to exit 0
 *   before their pod's container starts; pods start all at once, as an apply starts them);
 * - each container's env as the render resolves it: the ConfigMap by envFrom, literals, ConfigMap and
 *   Secret keys (the dev overlay generates its Secrets, so their values are in the render), optional
 *   keys that are absent left unset; plus PATH (the node image's). Nothing else of the test's environment.
 * - its ports, probes and the Services' ports.
 *
 * Standing in for the cluster:
 * - pod IPs: each pod gets a loopback address of its own in a /24 of 127/8 picked at random per run
 *   (Linux routes all of 127/8 to lo). Every role binds the same METRICS_PORT (9464) and fixed ports
 *   (8080, 50051, ...); on addresses of their own they do not clash with each other, with the other test
 *   files (which bind 127.0.0.1 on free ports; vitest runs two files at once here) or with another run of
 *   this file. Something listening on 0.0.0.0 on one of those ports would: checked before start.
 * - Service DNS: in env values, a URL whose host names a Service of the render is pointed at the pod its
 *   selector picks, on the port its targetPort names (toolport-catalog:50051 -> <catalog pod>:50051).
 * - the StatefulSets: toolport-postgres and toolport-nats are the harness's Postgres and NATS. Only
 *   host:port changes; the dev Secret's user (toolport), password and database (postgres) are kept: the
 *   harness's Postgres has the superuser toolport and trusts 127.0.0.1, so the password is not checked.
 *   Each service uses its database toolport_<service> there, as in the cluster: no other file of the run
 *   uses those names (checked before start; dropped at the end).
 *
 * Overridden, the only differences from the manifest's env (asserted below):
 * - HOST: the pod's address instead of 0.0.0.0 (binding every address is what a pod IP of its own allows);
 * - NATS_NAMESPACE (added): the harness's NATS is shared by every test file; a namespace gives these
 *   services a stream and subjects of their own, so they neither take nor see other files' events;
 * - EXECUTION_OUTBOUND_ALLOW (added, execution only): the upstream API is on loopback, which the outbound
 *   guard refuses; the allow-list names just its address. The catalog needs none (the document is inline).
 *
 * Not emulated: the restricted security context (uid 10001, read-only root filesystem), resources, the
 * NetworkPolicies, preStop. The startup probe is polled every 200 ms instead of every periodSeconds, within
 * its own failureThreshold x periodSeconds (capped at STARTUP_BUDGET_MS); a probe passes as the kubelet
 * judges it (HTTP 200-399, gRPC health SERVING, a TCP connection) within its timeoutSeconds.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPool, serviceDatabaseUrl } from "@toolport/kit/pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type Call, gatewayClient } from "../harness/http.js";
import { type Container, k8sDir, type Probe, type Render, render, requireKubectl } from "../harness/k8s.js";
import {
  assertPortsFree,
  containerEnv,
  type ImageEntry,
  imageEntry,
  type LocalPod,
  type LocalProcess,
  planPods,
  podSubnet,
  runContainer,
  runProbe,
  serviceDns,
} from "../harness/k8s-local.js";
import { sample } from "../harness/prometheus.js";
import { startEchoApi, type Upstream } from "../harness/upstreams.js";
import { echoApiDocument } from "./execution-support.js";
import { callOk, connectMcp } from "./mcp-support.js";

const OVERLAY = path.join(k8sDir, "overlays/dev");
/** The node image's PATH (the processes start nothing by name; a container has one all the same). */
const IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** How long a container may take to pass its startup probe (less when the probe's own limit is shorter). */
const STARTUP_BUDGET_MS = 60_000;
/** How long a process may take to exit after SIGTERM (the manifests allow 45 s; idle, it takes well under one). */
const STOP_BUDGET_MS = 15_000;

type TimedProbe = Probe & { periodSeconds?: number; failureThreshold?: number };

describe("the dev overlay's Deployments, run locally from the rendered manifests", () => {
  const tag = randomBytes(3).toString("hex");
  let r: Render;
  let image: ImageEntry;
  let pods: LocalPod[];
  let dns: ReturnType<typeof serviceDns>;
  let api: Upstream;
  /** The overrides, by role ("*": every container). */
  let overrides: Record<string, Record<string, string>>;
  /** Each container's environment as the render gives it (URLs not yet pointed at the stand-ins). */
  const manifestEnv = new Map<Container, Record<string, string>>();
  /** Each container's environment as it was started. */
  const startedEnv = new Map<Container, Record<string, string>>();
  const inits: LocalProcess[] = [];
  const mains = new Map<string, LocalProcess>();
  /** Stands in for the pods' volumes (emptyDirs). */
  const volumesDir = mkdtempSync(path.join(os.tmpdir(), "toolport-k8s-volumes-"));
  const databases: string[] = [];

  const podOf = (role: string) => pods.find((p) => p.role === role)!;
  const envOf = (role: string) => startedEnv.get(podOf(role).container)!;

  /** The environment of one container: the render's, Services pointed here, then the overrides. */
  function environment(pod: LocalPod, c: Container): Record<string, string> {
    const raw = containerEnv(r, c, image, (v) => v);
    manifestEnv.set(c, raw);
    const env: Record<string, string> = { PATH: IMAGE_PATH, ...containerEnv(r, c, image, dns.rewrite) };
    // A path on one of the container's volumes (other than /tmp) goes to a folder of this run instead.
    for (const mount of (c.volumeMounts ?? []).filter((m) => m.mountPath !== "/tmp")) {
      for (const [k, v] of Object.entries(env)) {
        if (v === mount.mountPath || v.startsWith(`${mount.mountPath}/`)) {
          env[k] = path.join(volumesDir, pod.name, mount.name, v.slice(mount.mountPath.length));
        }
      }
    }
    expect(env.HOST, `${pod.name}/${c.name}: HOST`).toBe("0.0.0.0");
    env.HOST = pod.ip;
    for (const [k, v] of Object.entries({ ...overrides["*"], ...overrides[pod.role] })) {
      expect(raw[k], `${pod.name}/${c.name}: ${k} is set by the manifest, not overridden here`).toBeUndefined();
      env[k] = v;
    }
    startedEnv.set(c, env);
    return env;
  }

  /** Polls the startup probe (or, without one, readiness) until it passes; fails with the process's log. */
  async function started(pod: LocalPod, proc: LocalProcess): Promise<void> {
    const c = pod.container;
    const probe = (c.startupProbe ?? c.readinessProbe) as TimedProbe | undefined;
    if (!probe) throw new Error(`${pod.name}: no startup or readiness probe to wait on`);
    const allowed = (probe.failureThreshold ?? 3) * (probe.periodSeconds ?? 10) * 1000;
    const deadline = Date.now() + Math.min(allowed, STARTUP_BUDGET_MS);
    let last = "not run";
    for (;;) {
      if (proc.started.child.exitCode !== null || proc.started.child.signalCode !== null) {
        throw new Error(`${pod.name}: exited (${proc.started.child.exitCode}) before its probe passed:\n${proc.tail()}`);
      }
      const res = await runProbe(pod, c, probe);
      if (res.ok) return;
      last = res.detail;
      if (Date.now() > deadline) throw new Error(`${pod.name}: probe still failing (${last}):\n${proc.tail()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** A pod as the kubelet starts it: init containers one after another to exit 0, then the container. */
  async function startPod(pod: LocalPod): Promise<void> {
    for (const c of pod.initContainers) {
      const init = runContainer(pod, c, image, environment(pod, c));
      inits.push(init);
      const code = await init.started.exited;
      if (code !== 0) throw new Error(`${pod.name}: init container ${c.name} exited ${code}:\n${init.tail()}`);
    }
    const proc = runContainer(pod, pod.container, image, environment(pod, pod.container));
    mains.set(pod.role, proc);
    await started(pod, proc);
  }

  beforeAll(async () => {
    requireKubectl();
    r = render(OVERLAY);
    image = imageEntry();
    pods = planPods(r, podSubnet());
    const pg = new URL(inject("pgUrl"));
    const nats = new URL(inject("natsUrl"));
    // The dev Secret's user is kept: the harness's Postgres must have it (its superuser is toolport).
    expect(pg.username).toBe("toolport");
    dns = serviceDns(r, pods, { "toolport-postgres": pg.host, "toolport-nats": nats.host });
    api = await startEchoApi();
    overrides = {
      "*": { NATS_NAMESPACE: `k8s${tag}` },
      execution: { EXECUTION_OUTBOUND_ALLOW: `127.0.0.1:${api.port}` },
    };
    for (const pod of pods) await assertPortsFree(pod);

    // Each service's database, as it derives it from the env it gets; no other file of the run may use it.
    const admin = createPool(inject("pgUrl"), 1);
    try {
      for (const pod of pods.filter((p) => p.initContainers.length > 0)) {
        const env = containerEnv(r, pod.container, image, dns.rewrite);
        const url = serviceDatabaseUrl(pod.role, env.DATABASE_URL!, env[`${pod.role.toUpperCase()}_DATABASE_URL`]);
        const name = new URL(url).pathname.slice(1);
        const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
        expect(rowCount, `database ${name} exists already: another test uses it`).toBe(0);
        databases.push(name);
      }
    } finally {
      await admin.end();
    }

    const results = await Promise.allSettled(pods.map(startPod));
    const failed = results.flatMap((res) => (res.status === "rejected" ? [(res.reason as Error).message] : []));
    if (failed.length > 0) throw new Error(`pods that did not start:\n\n${failed.join("\n\n")}`);
  });

  afterAll(async () => {
    // Whatever the tests left running (the last test stops them all and checks how).
    await Promise.all(
      [...inits, ...mains.values()].map(async (p) => {
        if (p.started.child.exitCode === null && p.started.child.signalCode === null) {
          p.started.child.kill("SIGKILL");
          await p.started.exited;
        }
      }),
    );
    await api?.close();
    rmSync(volumesDir, { recursive: true, force: true });
    if (databases.length > 0) {
      const admin = createPool(inject("pgUrl"), 1);
      try {
        for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    }
  });

  it("runs every role the image hosts, each from its Deployment, with the manifest's args", () => {
    expect(pods.map((p) => p.role).sort()).toEqual([
      "billing",
      "catalog",
      "content",
      "execution",
      "gateway",
      "identity",
      "mcp-server",
      "webhooks",
    ]);
    expect(new Set(pods.map((p) => p.ip)).size).toBe(pods.length);
    for (const pod of pods) {
      const proc = mains.get(pod.role)!;
      expect(proc.started.child.spawnargs.slice(1)).toEqual([...image.args, ...(pod.container.args ?? [])]);
      expect(pod.container.args).toEqual([`--roles=${pod.role}`]);
      // Services migrate first, in an init container of the same image that exits 0.
      const mine = inits.filter((i) => i.pod === pod);
      expect(
        mine.map((i) => i.container.args),
        pod.name,
      ).toEqual(pod.role === "gateway" || pod.role === "mcp-server" ? [] : [[`--roles=${pod.role}`, "--migrate"]]);
      for (const init of mine) {
        expect(init.started.child.exitCode, init.tail()).toBe(0);
        expect(init.started.output(), pod.name).toContain("migrations applied");
      }
    }
  });

  it("gives each container the render's env, Services pointed at their pods, and only the named overrides", () => {
    const gatewayPod = podOf("gateway");
    for (const [c, env] of startedEnv) {
      const pod = pods.find((p) => p.container === c || p.initContainers.includes(c))!;
      const raw = manifestEnv.get(c)!;
      const added = Object.keys(env).filter((k) => !(k in raw));
      const expected = ["PATH", ...Object.keys({ ...overrides["*"], ...overrides[pod.role] })];
      expect(added.sort(), `${pod.name}/${c.name}`).toEqual(expected.sort());
      expect(
        Object.keys(raw).filter((k) => !(k in env)),
        `${pod.name}/${c.name}: variables of the manifest not given`,
      ).toEqual([]);
      const changed = Object.keys(raw).filter((k) => raw[k] !== env[k]);
      const onVolume = (k: string) => (env[k] as string).startsWith(`${volumesDir}/`);
      for (const k of changed.filter(onVolume)) {
        // A path on a volume: the same path under the run's stand-in of that volume.
        const mount = c.volumeMounts?.find((m) => raw[k] === m.mountPath || raw[k]?.startsWith(`${m.mountPath}/`));
        expect(mount, `${c.name}: ${k} is on a volume of the container`).toBeDefined();
        expect(env[k]).toBe(path.join(volumesDir, pod.name, mount?.name ?? "", raw[k]?.slice(mount?.mountPath.length) ?? ""));
      }
      for (const k of changed.filter((k) => k !== "HOST" && !onVolume(k))) {
        // A changed value is a URL whose host named a Service; nothing else of it changes.
        const before = new URL(raw[k]!);
        const after = new URL(env[k]!);
        expect(r.find("Service", before.hostname.split(".")[0]!), `${c.name}: ${k}`).toBeDefined();
        expect([after.protocol, after.username, after.password, after.pathname]).toEqual([
          before.protocol,
          before.username,
          before.password,
          before.pathname,
        ]);
      }
      expect(env.HOST).toBe(pod.ip);
      expect(env.NODE_ENV, "the image's ENV").toBe("production");
    }
    // The services find each other through their Services' names, now on the pods' addresses.
    const gateway = envOf("gateway");
    for (const role of ["catalog", "execution", "billing", "identity", "content", "webhooks"]) {
      const url = new URL(gateway[`${role.toUpperCase()}_URL`]!);
      expect(url.hostname, role).toBe(podOf(role).ip);
      expect(Number(url.port), role).toBe(podOf(role).container.ports![0]!.containerPort);
    }
    expect(envOf("mcp-server").GATEWAY_URL).toBe(`http://${gatewayPod.ip}:8080`);
    expect(new URL(envOf("catalog").DATABASE_URL!).host).toBe(new URL(inject("pgUrl")).host);
    expect(envOf("catalog").NATS_URL).toBe(`nats://${new URL(inject("natsUrl")).host}`);
  });

  it("passes every container's startup, readiness and liveness probe as the manifest states it", async () => {
    const kinds = ["startupProbe", "readinessProbe", "livenessProbe"] as const;
    for (const pod of pods) {
      for (const kind of kinds) {
        const probe = pod.container[kind];
        expect(probe, `${pod.name}: ${kind}`).toBeDefined();
        const res = await runProbe(pod, pod.container, probe!);
        expect(res.ok, `${pod.name} ${kind}: ${res.detail}\n${mains.get(pod.role)!.tail(3000)}`).toBe(true);
      }
    }
    // What they check: the services over gRPC health, the edge over HTTP.
    expect(podOf("catalog").container.readinessProbe?.grpc?.port).toBe(50051);
    expect(podOf("catalog").container.readinessProbe?.grpc?.service).toBe("toolport.readiness");
    expect(podOf("gateway").container.readinessProbe?.httpGet?.path).toBe("/readyz");
    expect(podOf("mcp-server").container.readinessProbe?.httpGet?.path).toBe("/mcp/health");
  });

  describe("a round trip through the gateway's Service", () => {
    let call: Call;
    let key: string;
    let tools: Record<string, string>;
    let executionId: string;

    beforeAll(() => {
      call = gatewayClient(`http://${dns.address("toolport-gateway", "http")}`);
    });

    it("registers an agent, publishes an OpenAPI service and finds its tool by search", async () => {
      const health = await call("GET", "/health");
      expect(health.status, JSON.stringify(health.body)).toBe(200);
      for (const role of ["catalog", "execution", "billing", "identity", "content", "webhooks"]) {
        expect(health.body.roles[role], role).toEqual({
          status: "serving",
          runs: `${podOf(role).ip}:${podOf(role).container.ports![0]!.containerPort}`,
        });
      }

      const agent = await call("POST", "/agents", { body: { name: `k8s-${tag}`, operator_email: `k8s-${tag}@example.com` } });
      expect(agent.status, JSON.stringify(agent.body)).toBe(200);
      key = agent.body.api_key;

      const published = await call("POST", "/services", {
        key,
        body: { api: { document: echoApiDocument(), base_url: api.url } },
      });
      expect(published.status, JSON.stringify(published.body)).toBe(201);
      tools = Object.fromEntries(published.body.tools.map((t: { name: string; id: string }) => [t.name, t.id]));
      expect(tools.echo_item).toBeDefined();

      const found = await call("GET", "/tools/search?query=echo%20item", { key });
      expect(found.status, JSON.stringify(found.body)).toBe(200);
      expect(found.body.map((t: { id: string }) => t.id)).toContain(tools.echo_item);
    });

    it("calls the tool, which reaches the upstream, and reads the stored result back by its handle", async () => {
      const before = api.requests.length;
      const res = await call("POST", `/tools/call/${tools.echo_item}`, {
        key,
        body: { tool_input: { item_id: "pod", title: "from the manifests" } },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ tool_id: tools.echo_item, success: true, error: null });
      expect(res.body.result).toMatchObject({
        method: "POST",
        raw_path: "/echo/items/pod",
        body: { title: "from the manifests" },
      });
      expect(api.requests.length).toBe(before + 1);
      executionId = res.body.execution_id;

      const back = await call("GET", `/tools/executions/${executionId}/result`, { key });
      expect(back.status, JSON.stringify(back.body)).toBe(200);
      expect(back.body).toMatchObject({ execution_id: executionId, tool_id: tools.echo_item, status: "success", error: null });
      expect(back.body.result).toEqual(res.body.result);
    });

    it("reaches the same through the MCP server's Service, which calls the gateway at its Service", async () => {
      const mcp = await connectMcp(`http://${dns.address("toolport-mcp-server", "http")}/mcp`, { key }, "k8s-smoke");
      try {
        // search_tools is the gateway's public search (which lists public services only: the one published
        // above is private) for the same key: the same answer, and not an empty one.
        const found = await callOk(mcp, "search_tools", { query: "word count", limit: 5, detail: "full" });
        const rest = await call("GET", "/tools/public/search?query=word%20count&limit=5", { key });
        expect(found.tools.length).toBeGreaterThan(0);
        expect(found.tools).toEqual(rest.body);
        const stored = await callOk(mcp, "fetch_result", { execution_id: executionId, path: "body.title" });
        expect(stored).toMatchObject({ execution_id: executionId, status: "success", result: "from the manifests" });
      } finally {
        await mcp.close();
      }
    });

    it("shows the call in the gateway's and execution's metrics, each served on METRICS_PORT at its pod", async () => {
      const metrics = async (role: string) => {
        const res = await fetch(`http://${podOf(role).ip}:${envOf(role).METRICS_PORT}/metrics`);
        expect(res.status, role).toBe(200);
        return res.text();
      };
      // Every pod serves them where its prometheus.io annotations say, on the same port.
      for (const pod of pods) {
        expect(envOf(pod.role).METRICS_PORT).toBe("9464");
        expect(await metrics(pod.role), pod.name).toMatch(/^process_cpu_user_seconds_total /m);
      }
      const gateway = await metrics("gateway");
      expect(
        sample(gateway, "toolport_http_request_duration_seconds_count", {
          role: "gateway",
          method: "POST",
          route: "/v1/tools/call/:tool_id",
          status: "200",
        }),
      ).toBe(1);
      const execution = await metrics("execution");
      expect(
        sample(execution, "toolport_upstream_call_duration_seconds_count", { tool: tools.echo_item!, outcome: "success" }),
      ).toBe(1);
      expect(
        sample(execution, "toolport_rpc_server_duration_seconds_count", { role: "execution", method: "CallTool", code: "ok" }),
      ).toBe(1);
    });
  });

  it("stops every process on SIGTERM: each exits 0", async () => {
    const stopping = [...mains.values()].map(async (proc) => {
      proc.started.child.kill("SIGTERM");
      const code = await Promise.race([
        proc.started.exited,
        new Promise<string>((resolve) => setTimeout(() => resolve("still running"), STOP_BUDGET_MS)),
      ]);
      return { name: proc.pod.name, code, log: proc.tail(2000) };
    });
    for (const { name, code, log } of await Promise.all(stopping)) expect(code, `${name}:\n${log}`).toBe(0);
    // The catalog's clean stop wrote its search index where the manifest keeps it: on its emptyDir.
    const catalog = podOf("catalog");
    const snapshot = startedEnv.get(catalog.container)?.CATALOG_INDEX_SNAPSHOT;
    expect(snapshot?.startsWith(path.join(volumesDir, catalog.name, "search-index"))).toBe(true);
    expect(statSync(snapshot as string).size).toBeGreaterThan(0);
  });
});
