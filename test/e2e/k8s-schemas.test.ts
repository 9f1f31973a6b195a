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
 * Both are maintained packages of the published schemas, so nothing is vendored by hand. A kind neither
 * package knows (a CRD such as a ServiceMonitor) fails the test rather than passing unchecked: a CRD would
 * need its schema vendored here first. kubectl (1.27+, kustomize v5) renders the manifests.
 */
import path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { type K8sObject, k8sDir, listRenders, render, requireKubectl } from "../harness/k8s.js";

interface SchemaModel {
  validate(): void;
}
type ModelClass = new (data: unknown) => SchemaModel;
interface AttributeType {
  baseName: string;
  type: string;
}
type ClientModel = { getAttributeTypeMap(): AttributeType[] };

/** The schema validator of an apiVersion and kind, or undefined when kubernetes-models has none. */
async function schemaModel(apiVersion: string, kind: string): Promise<ModelClass | undefined> {
  try {
    const module = (await import(`kubernetes-models/${apiVersion}/${kind}`)) as Record<string, ModelClass>;
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

function strictErrors(object: K8sObject): string[] {
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
    const monitor = { apiVersion: "monitoring.coreos.com/v1", kind: "ServiceMonitor", metadata: { name: "x" } } as K8sObject;
    expect(await schemaErrors(monitor)).toBe("no schema for monitoring.coreos.com/v1 ServiceMonitor");
    expect(strictErrors(monitor)).toEqual(["no model V1ServiceMonitor for monitoring.coreos.com/v1 ServiceMonitor"]);
  });
});
