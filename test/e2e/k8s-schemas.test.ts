/**
 * Every object the manifests render (deploy/k8s: the base and each overlay) against the Kubernetes API's own
 * schemas, offline, as the API server would judge it on `kubectl apply --validate=strict`:
 *
 * - Types, enums, formats and required fields: `kubernetes-models` (the OpenAPI schemas of Kubernetes 1.33
 *   compiled to validators, one per kind: `kubernetes-models/<apiVersion>/<Kind>`).
 * - Unknown or misspelt fields (`readinesProbe`, a field at the wrong level), which those schemas allow, as
 *   Kubernetes' OpenAPI does: the official client's models (`@kubernetes/client-node`, generated from the
 *   same 1.33 OpenAPI document) list every field of every type, and each object is walked against them.
 *
 * - The Prometheus Operator's kinds (components/monitoring: PodMonitor, PrometheusRule), from
 *   `@kubernetes-models/prometheus-operator` (its CRDs' schemas compiled the same way); their unknown
 *   fields against the field lists of that package's type declarations.
 *
 * All are maintained packages of the published schemas, so nothing is vendored by hand. A kind none of
 * them knows (another CRD) fails the test rather than passing unchecked. kubectl (1.27+, kustomize v5)
 * renders the manifests.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { type K8sObject, k8sDir, listRenders, render, repoRoot, requireKubectl } from "../harness/k8s.js";

interface SchemaModel {
  validate(): void;
}
type ModelClass = new (data: unknown) => SchemaModel;
interface AttributeType {
  baseName: string;
  type: string;
}
type ClientModel = { getAttributeTypeMap(): AttributeType[] };

/** The Prometheus Operator's API group (components/monitoring), whose kinds come from their own package. */
const MONITORING = "monitoring.coreos.com/";
const monitoringModels = "@kubernetes-models/prometheus-operator";

/** The schema validator of an apiVersion and kind, or undefined when kubernetes-models has none. */
async function schemaModel(apiVersion: string, kind: string): Promise<ModelClass | undefined> {
  try {
    const specifier = apiVersion.startsWith(MONITORING)
      ? `${monitoringModels}/${apiVersion}/${kind}`
      : `kubernetes-models/${apiVersion}/${kind}`;
    const module = (await import(specifier)) as Record<string, ModelClass>;
    return module[kind];
  } catch {
    return undefined;
  }
}

/**
 * A Secret's data as the API server reads it. kustomize wraps long base64 values at 70 characters; the
 * server's decoder (Go's encoding/base64) skips the line breaks, the validator's "byte" format does not.
 */
function asServerReads(object: K8sObject): K8sObject {
  if (object.kind !== "Secret" || !object.data) return object;
  const data = Object.fromEntries(Object.entries(object.data).map(([k, v]) => [k, v.replace(/[\r\n]/g, "")]));
  return { ...object, data };
}

/** Schema errors of one object ("" when it validates). */
async function schemaErrors(object: K8sObject): Promise<string> {
  const Model = await schemaModel(object.apiVersion, object.kind);
  if (!Model) return `no schema for ${object.apiVersion} ${object.kind}`;
  try {
    new Model(asServerReads(object)).validate();
    return "";
  } catch (error) {
    return (error as Error).message;
  }
}

const clientModels = k8s as unknown as Record<string, ClientModel | undefined>;

/** The client's model of a kind: V1Deployment for apps/v1 Deployment, V2HorizontalPodAutoscaler for autoscaling/v2. */
function clientModelName(apiVersion: string, kind: string): string {
  const version = apiVersion.split("/").at(-1)!;
  return `${version[0]!.toUpperCase()}${version.slice(1)}${kind}`;
}

/** Fields the model of `type` does not have, anywhere in `value`, as JSON paths. */
function unknownFields(value: unknown, type: string, at: string, out: string[]): void {
  if (value === null || value === undefined) return;
  const array = /^Array<(.+)>$/.exec(type);
  if (array) {
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) unknownFields(item, array[1]!, `${at}[${i}]`, out);
    }
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map) {
    if (typeof value === "object")
      for (const [k, v] of Object.entries(value)) unknownFields(v, map[1]!, `${at}[${JSON.stringify(k)}]`, out);
    return;
  }
  const model = clientModels[type];
  if (typeof model?.getAttributeTypeMap !== "function" || typeof value !== "object" || Array.isArray(value)) return;
  const fields = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  for (const [key, v] of Object.entries(value)) {
    const fieldType = fields.get(key);
    if (fieldType === undefined) out.push(`${at}.${key}: no such field in ${type}`);
    else unknownFields(v, fieldType, `${at}.${key}`, out);
  }
}

/**
 * The fields of a Prometheus Operator type and each one's type, from its declaration in the models package
 * (`"name"?: Type;` lines of `export interface I<Type>`), where the compiled schemas do not forbid others.
 */
function monitoringFields(version: string, type: string): Map<string, string> | undefined {
  const file = path.join(repoRoot, "test/node_modules", monitoringModels, "monitoring.coreos.com", version, `${type}.d.ts`);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const body = new RegExp(`export interface I${type}(?: extends [\\w, ]+)? \\{\\n([\\s\\S]*?)\\n\\}`).exec(text)?.[1] ?? "";
  return new Map([...body.matchAll(/^ {4}"([^"]+)"\??: ([^;\n]+)/gm)].map((m) => [m[1]!, m[2]!.trim()]));
}

const MONITORING_TYPE = /^(Array<)?IComGithubPrometheusOperatorPrometheusOperatorPkgApisMonitoring(V\w+?)(?=[A-Z])(\w+?)>?$/;

/** Unknown fields of a Prometheus Operator object, walked through the declared types (maps and other groups' types are not walked). */
function monitoringUnknownFields(value: unknown, version: string, type: string, at: string, out: string[]): void {
  if (value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) monitoringUnknownFields(item, version, type, `${at}[${i}]`, out);
    return;
  }
  const fields = monitoringFields(version, type);
  if (!fields) return;
  for (const [key, v] of Object.entries(value)) {
    const fieldType = fields.get(key);
    if (fieldType === undefined) {
      out.push(`${at}.${key}: no such field in ${type}`);
      continue;
    }
    if (key === "metadata") unknownFields(v, "V1ObjectMeta", `${at}.${key}`, out);
    const nested = MONITORING_TYPE.exec(fieldType);
    if (nested) monitoringUnknownFields(v, nested[2]!.toLowerCase(), nested[3]!, `${at}.${key}`, out);
  }
}

function strictErrors(object: K8sObject): string[] {
  if (object.apiVersion.startsWith(MONITORING)) {
    const version = object.apiVersion.slice(MONITORING.length);
    if (!monitoringFields(version, object.kind)) return [`no model ${object.kind} for ${object.apiVersion}`];
    const out: string[] = [];
    monitoringUnknownFields(object, version, object.kind, "", out);
    return out;
  }
  const name = clientModelName(object.apiVersion, object.kind);
  if (typeof clientModels[name]?.getAttributeTypeMap !== "function")
    return [`no model ${name} for ${object.apiVersion} ${object.kind}`];
  const out: string[] = [];
  unknownFields(object, name, "", out);
  return out;
}

const label = (o: K8sObject) => `${o.kind}/${o.metadata.name}`;

describe("the rendered manifests against the Kubernetes API schemas (1.33, offline)", () => {
  beforeAll(() => requireKubectl());

  for (const name of listRenders()) {
    describe(name, () => {
      let objects: K8sObject[];
      beforeAll(() => {
        objects = render(path.join(k8sDir, name)).objects;
      });

      it("validates every object: types, enums, formats, required fields", async () => {
        expect(objects.length).toBeGreaterThan(0);
        const problems: string[] = [];
        for (const object of objects) {
          const errors = await schemaErrors(object);
          if (errors) problems.push(`${label(object)}: ${errors}`);
        }
        expect(problems).toEqual([]);
      });

      it("has no field the API does not know (strict validation)", () => {
        const problems = objects.flatMap((o) => strictErrors(o).map((e) => `${label(o)}${e}`));
        expect(problems).toEqual([]);
      });
    });
  }

  it("catches what it is for: a wrong enum, a string for a number, a missing required field, a misspelt field", async () => {
    const objects = render(path.join(k8sDir, "base")).objects;
    const deployment = structuredClone(objects.find((o) => o.kind === "Deployment" && o.metadata.name === "toolport-gateway")!);
    const pod = (deployment.spec as { template: { spec: { containers: Array<Record<string, unknown>> } } }).template.spec;
    const container = pod.containers[0]!;
    container.imagePullPolicy = "Sometimes";
    (container.ports as Array<Record<string, unknown>>)[0]!.containerPort = "8080";
    delete container.name;
    container.readinesProbe = container.readinessProbe;
    const errors = await schemaErrors(deployment);
    expect(errors).toContain("imagePullPolicy must be equal to one of the allowed values");
    expect(errors).toContain("containerPort must be integer");
    expect(errors).toContain("containers/0 must have required property name");
    expect(strictErrors(deployment)).toEqual([".spec.template.spec.containers[0].readinesProbe: no such field in V1Container"]);
    // Base64 is still checked (line breaks aside).
    const secret = { apiVersion: "v1", kind: "Secret", metadata: { name: "s" }, data: { KEY: "not base64!" } } as K8sObject;
    expect(await schemaErrors(secret)).toContain('KEY must match format "byte"');
    // A kind without a schema here is a failure, not a pass.
    const certificate = { apiVersion: "cert-manager.io/v1", kind: "Certificate", metadata: { name: "x" } } as K8sObject;
    expect(await schemaErrors(certificate)).toBe("no schema for cert-manager.io/v1 Certificate");
    expect(strictErrors(certificate)).toEqual(["no model V1Certificate for cert-manager.io/v1 Certificate"]);
    // The Prometheus Operator's kinds: a missing required field, a wrong type, a misspelt field at any depth.
    const rule = {
      apiVersion: "monitoring.coreos.com/v1",
      kind: "PrometheusRule",
      metadata: { name: "x", lables: {} },
      spec: { groups: [{ name: "g", rules: [{ alert: "A", expr: "up == 0", fro: "5m" }] }] },
    } as unknown as K8sObject;
    expect(strictErrors(rule)).toEqual([
      ".metadata.lables: no such field in V1ObjectMeta",
      ".spec.groups[0].rules[0].fro: no such field in Rule",
    ]);
    const monitor = {
      apiVersion: "monitoring.coreos.com/v1",
      kind: "PodMonitor",
      metadata: { name: "x" },
      spec: { selector: {}, podMetricsEndpoints: [{ port: 9464 }] },
    } as unknown as K8sObject;
    expect(await schemaErrors(monitor)).toContain("port must be string");
    expect(await schemaErrors({ ...monitor, spec: undefined } as K8sObject)).toContain("must have required property spec");
  });
});
