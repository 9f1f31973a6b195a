/**
 * The Kubernetes manifests (deploy/k8s) as `kubectl apply -k` would send them: `render(dir)` runs
 * `kubectl kustomize <dir>` and reads the objects back as JSON, offline, with no YAML parser and no cluster.
 *
 * The YAML goes through `kubectl annotate --local -f - -o json toolport.test/unused-`: removing an
 * annotation no object carries, which kubectl does locally (no server, no discovery, any kind) and prints
 * each object as JSON, one after another; that stream is split at its top-level objects and JSON.parse'd,
 * and the count is checked against the YAML documents. (`kubectl create --dry-run=client -o json` would be
 * the obvious route, but it asks a server for discovery.) kubectl 1.27 or newer (kustomize v5) must be on
 * PATH: `requireKubectl()` says so when it is not.
 *
 * Used by the manifest checks (k8s-manifests.test.ts), the schema validation (k8s-schemas.test.ts) and the
 * smoke test that starts the dev overlay's Deployments locally (k8s-smoke.test.ts).
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
export const k8sDir = path.join(repoRoot, "deploy/k8s");
/** The Toolport image every role runs (deploy/k8s/base). */
export const IMAGE = "ghcr.io/toolport/toolport";

/** Fails with what to install when kubectl (with kustomize v5) is not on PATH. */
export function requireKubectl(): void {
  const probe = spawnSync("kubectl", ["version", "--client", "-o", "json"], { encoding: "utf8" });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      "kubectl is needed on PATH to render deploy/k8s (kubectl 1.27 or newer, whose built-in kustomize v5 " +
        `renders the overlays; no cluster is contacted): ${probe.error?.message ?? probe.stderr}`,
    );
  }
  const version = JSON.parse(probe.stdout) as { kustomizeVersion?: string };
  if (Number(/^v(\d+)/.exec(version.kustomizeVersion ?? "")?.[1] ?? 0) < 5) {
    throw new Error(`kubectl's kustomize is ${version.kustomizeVersion ?? "missing"}; v5 is needed (kubectl 1.27 or newer)`);
  }
}

/** Each folder kustomize can render: the base and every overlay. */
export function listRenders(): string[] {
  const overlays = readdirSync(path.join(k8sDir, "overlays"), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return ["base", ...overlays.map((n) => `overlays/${n}`)];
}

export type Labels = Record<string, string>;
export interface LabelSelector {
  matchLabels?: Labels;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}
export interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  privileged?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type?: string };
}
export interface Probe {
  grpc?: { port: number; service?: string };
  httpGet?: { path?: string; port: number | string };
  tcpSocket?: { port: number | string };
  exec?: { command: string[] };
  timeoutSeconds?: number;
}
export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
  };
}
export interface Container {
  name: string;
  image?: string;
  args?: string[];
  ports?: Array<{ name?: string; containerPort: number; protocol?: string; hostPort?: number }>;
  env?: EnvVar[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string; optional?: boolean }; prefix?: string }>;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] }; sleep?: { seconds: number } } };
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: SecurityContext;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
}
export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  securityContext?: SecurityContext;
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds?: number;
  volumes?: Array<{ name: string; emptyDir?: object; hostPath?: object; secret?: { secretName: string } }>;
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  topologySpreadConstraints?: Array<{ topologyKey: string; labelSelector?: LabelSelector }>;
}
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Labels };
  spec?: unknown;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  automountServiceAccountToken?: boolean;
}
export interface Workload {
  object: K8sObject;
  labels: Labels;
  pod: PodSpec;
}
export interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
  protocol?: string;
}
export interface NetworkPolicyPeer {
  podSelector?: LabelSelector;
  namespaceSelector?: LabelSelector;
  ipBlock?: { cidr: string; except?: string[] };
}
export interface NetworkPolicyPort {
  port?: number | string;
  endPort?: number;
  protocol?: string;
}
export interface NetworkPolicyRule {
  from?: NetworkPolicyPeer[];
  to?: NetworkPolicyPeer[];
  ports?: NetworkPolicyPort[];
}
export interface NetworkPolicySpec {
  podSelector: LabelSelector;
  policyTypes?: string[];
  ingress?: NetworkPolicyRule[];
  egress?: NetworkPolicyRule[];
}

/** Top-level JSON values of a stream of them (`kubectl ... -o json` prints one object after another). */
function splitJsonStream(text: string): string[] {
  const values: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{" || ch === "[") {
      if (depth++ === 0) start = i;
    } else if (ch === "}" || ch === "]") {
      if (--depth === 0) values.push(text.slice(start, i + 1));
    }
  }
  if (depth !== 0 || inString) throw new Error("kubectl printed an incomplete JSON stream");
  return values;
}

function kubectl(args: string[], input?: string): string {
  const res = spawnSync("kubectl", args, { input, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (res.error) throw res.error;
  if (res.status !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${res.status}:\n${res.stderr}`);
  return res.stdout;
}

export class Render {
  constructor(
    readonly name: string,
    readonly objects: K8sObject[],
  ) {}

  of(kind: string): K8sObject[] {
    return this.objects.filter((o) => o.kind === kind);
  }

  find(kind: string, name: string): K8sObject | undefined {
    return this.objects.find((o) => o.kind === kind && o.metadata.name === name);
  }

  workloads(): Workload[] {
    const out: Workload[] = [];
    for (const object of this.objects) {
      const spec = object.spec as { template?: { metadata?: { labels?: Labels }; spec: PodSpec } } | undefined;
      if (["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"].includes(object.kind) && spec?.template) {
        out.push({ object, labels: spec.template.metadata?.labels ?? {}, pod: spec.template.spec });
      }
      if (object.kind === "CronJob") {
        const job = (object.spec as { jobTemplate: { spec: { template: { metadata?: { labels?: Labels }; spec: PodSpec } } } })
          .jobTemplate.spec.template;
        out.push({ object, labels: job.metadata?.labels ?? {}, pod: job.spec });
      }
    }
    return out;
  }

  /**
   * The Toolport roles' workloads (their containers run the Toolport image), by role (`--roles=<role>`);
   * a migration Job (`--migrate`) serves no role and is not one of them.
   */
  roles(): Map<string, Workload> {
    const out = new Map<string, Workload>();
    for (const w of this.workloads()) {
      const main = w.pod.containers.find((c) => imageName(c.image) === IMAGE && !c.args?.includes("--migrate"));
      const role = main?.args?.find((a) => a.startsWith("--roles="))?.slice("--roles=".length);
      if (role) out.set(role, w);
    }
    return out;
  }

  /** The variables a container is given, with where each comes from (env over envFrom, as Kubernetes does). */
  env(c: Container): Map<string, EnvSource> {
    const out = new Map<string, EnvSource>();
    for (const from of c.envFrom ?? []) {
      if (from.configMapRef) {
        const map = this.find("ConfigMap", from.configMapRef.name);
        for (const [key, value] of Object.entries(map?.data ?? {})) {
          out.set(`${from.prefix ?? ""}${key}`, { from: "configMap", name: from.configMapRef.name, value });
        }
      }
      // A whole Secret: its keys when the render has it (the operator's, like the upstream credentials,
      // are not in it, so they add nothing here).
      if (from.secretRef) {
        const secret = this.find("Secret", from.secretRef.name);
        for (const key of Object.keys({ ...secret?.data, ...secret?.stringData })) {
          out.set(`${from.prefix ?? ""}${key}`, {
            from: "secret",
            name: from.secretRef.name,
            key,
            optional: from.secretRef.optional === true,
          });
        }
      }
    }
    for (const e of c.env ?? []) {
      const secret = e.valueFrom?.secretKeyRef;
      const configMap = e.valueFrom?.configMapKeyRef;
      if (e.value !== undefined) out.set(e.name, { from: "value", value: e.value });
      else if (secret)
        out.set(e.name, { from: "secret", name: secret.name, key: secret.key, optional: secret.optional === true });
      else if (configMap) {
        const value = this.find("ConfigMap", configMap.name)?.data?.[configMap.key];
        out.set(e.name, { from: "configMap", name: configMap.name, value });
      } else out.set(e.name, { from: "other" });
    }
    return out;
  }

  /** A variable's value when the render says it (a literal, a ConfigMap, a Secret of this render). */
  value(source: EnvSource | undefined): string | undefined {
    if (!source) return undefined;
    if (source.from === "value" || source.from === "configMap") return source.value;
    if (source.from === "secret") return secretValue(this.find("Secret", source.name), source.key);
    return undefined;
  }

  /** The Service named by a URL's host (`name`, `name.namespace`, `name.namespace.svc...`) and its port. */
  serviceAt(url: string): { service: K8sObject; port: ServicePort } | undefined {
    const u = new URL(url);
    const service = this.find("Service", u.hostname.split(".")[0]!);
    const defaults: Record<string, number> = {
      "http:": 80,
      "https:": 443,
      "postgres:": 5432,
      "postgresql:": 5432,
      "nats:": 4222,
    };
    const number = Number(u.port || defaults[u.protocol]);
    const port = (service?.spec as { ports?: ServicePort[] } | undefined)?.ports?.find((p) => p.port === number);
    return service && port ? { service, port } : undefined;
  }

  /** The workloads a Service sends to, and whether each one has the container port its targetPort names. */
  backends(service: K8sObject, port: ServicePort): Array<{ workload: Workload; containerPort: number | undefined }> {
    const selector = (service.spec as { selector?: Labels }).selector ?? {};
    const target = port.targetPort ?? port.port;
    return this.workloads()
      .filter((w) => Object.keys(selector).length > 0 && matchesLabels({ matchLabels: selector }, w.labels))
      .map((workload) => {
        const ports = [...workload.pod.containers, ...(workload.pod.initContainers ?? [])].flatMap((c) => c.ports ?? []);
        const found = ports.find((p) => (typeof target === "number" ? p.containerPort === target : p.name === target));
        return { workload, containerPort: found?.containerPort };
      });
  }
}

export type EnvSource =
  | { from: "value"; value: string }
  | { from: "configMap"; name: string; value: string | undefined }
  | { from: "secret"; name: string; key: string; optional: boolean }
  | { from: "other" };

export function secretValue(secret: K8sObject | undefined, key: string): string | undefined {
  if (!secret) return undefined;
  if (secret.stringData?.[key] !== undefined) return secret.stringData[key];
  const data = secret.data?.[key];
  return data === undefined ? undefined : Buffer.from(data, "base64").toString("utf8");
}

export function imageName(image: string | undefined): string | undefined {
  if (!image) return undefined;
  const at = image.indexOf("@");
  const withoutDigest = at >= 0 ? image.slice(0, at) : image;
  const slash = withoutDigest.lastIndexOf("/");
  const colon = withoutDigest.lastIndexOf(":");
  return colon > slash ? withoutDigest.slice(0, colon) : withoutDigest;
}

/** The image's tag; undefined when it has none (a digest alone counts as pinned: "@digest"). */
export function imageTag(image: string): string | undefined {
  const at = image.indexOf("@");
  if (at >= 0) return image.slice(at);
  const slash = image.lastIndexOf("/");
  const colon = image.lastIndexOf(":");
  return colon > slash ? image.slice(colon + 1) : undefined;
}

export function matchesLabels(selector: LabelSelector, labels: Labels): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = e.key in labels;
    const inValues = has && (e.values ?? []).includes(labels[e.key]!);
    if (e.operator === "In" && !inValues) return false;
    if (e.operator === "NotIn" && inValues) return false;
    if (e.operator === "Exists" && !has) return false;
    if (e.operator === "DoesNotExist" && has) return false;
  }
  return true;
}

export function render(dir: string): Render {
  const yaml = kubectl(["kustomize", dir]);
  const documents = yaml.split("\n").filter((l) => l === "---").length + (yaml.trim() === "" ? 0 : 1);
  const json = kubectl(["annotate", "--local", "-f", "-", "-o", "json", "toolport.test/unused-"], yaml);
  const objects = splitJsonStream(json).map((text) => {
    const object = JSON.parse(text) as K8sObject & { metadata: { annotations?: Record<string, string> } };
    // kubectl leaves an empty annotations map where it removed nothing.
    if (object.metadata.annotations && Object.keys(object.metadata.annotations).length === 0) delete object.metadata.annotations;
    return object;
  });
  if (objects.length !== documents) {
    throw new Error(`${dir}: kustomize printed ${documents} YAML documents, but ${objects.length} objects came back as JSON`);
  }
  return new Render(path.relative(k8sDir, dir), objects);
}
