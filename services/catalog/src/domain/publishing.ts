/**
 * Publishing (DESIGN.md "Publishing"): create a service from an OpenAPI document or an MCP server,
 * edit, re-import, price, deprecate, deactivate and delete. Every change to tools writes its
 * toolport.catalog.tool.changed events in the same transaction; after commit this replica's index is
 * refreshed at once (the event brings every other replica's index along).
 */

import { randomUUID } from "node:crypto";
import { conflict, DomainError, invalidArgument, notFound, permissionDenied } from "@toolport/kit/errors";
import { replaceNul } from "@toolport/kit/json-guard";
import { assertCanManage, assertCanPublishInto, assertMayManageCatalog, type Caller, canSee } from "./access.js";
import { oneOf, requireCaller } from "./checks.js";
import { checkMaterial, resolveCredential } from "./credentials.js";
import type { CatalogDeps } from "./deps.js";
import {
  type Contact,
  type CredentialMaterial,
  type SecuritySchemeInfo,
  type ServiceRecord,
  type ServiceStatus,
  serviceStatuses,
  type ToolDraft,
  type ToolRecord,
  toolStatuses,
  type VerificationTier,
  type Visibility,
  verificationTiers,
  visibilities,
} from "./model.js";
import {
  type DiscoveredMcpAuthorization,
  discoverMcpAuthorization,
  mcpOAuthScheme,
  refreshOAuthConnection,
  storeDiscoveredClient,
} from "./oauth.js";
import type { CatalogTx, NewService, ToolPatch } from "./ports.js";
import { checkSlug, slugify } from "./slug.js";
import { configurationUrl } from "./views.js";

export type SourceInput =
  | { kind: "api"; documentText?: string; documentUrl?: string; baseUrl?: string }
  | {
      kind: "mcp_server";
      url: string;
      /** How calls send a caller's credential (declared by the publisher); unset: none needed. */
      securityScheme?: SecuritySchemeInfo;
      /** Sent only to list the tools; never stored. */
      credential?: CredentialMaterial;
    };

export interface CreateServiceInput {
  source?: SourceInput;
  name?: string;
  slug?: string;
  summary?: string;
  description?: string;
  category?: string;
  logo?: string;
  contact?: Partial<Contact>;
  documentationUrl?: string;
  version?: string;
  visibility?: string;
  organizationId?: string;
  defaultPricePerCallCents?: bigint;
  /**
   * Not from the CreateService RPC: the APIs.guru directory entry the document came from (domain/directory.ts).
   * Recorded in directory_imports in the same transaction; a second service from the same entry is a 409
   * already_imported and stores nothing.
   */
  fromDirectory?: { entry: string; version: string };
}

export interface PublishResult {
  service: ServiceRecord;
  tools: ToolRecord[];
  warnings: string[];
  deactivatedToolIds?: string[];
}

function checkPrice(cents: bigint | undefined, field: string): bigint | undefined {
  if (cents !== undefined && cents < 0n) {
    throw invalidArgument("invalid_price", `${field} must be zero or more cents`, { details: { field } });
  }
  return cents;
}

function checkUrl(value: string | undefined, field: string): string | undefined {
  if (value === undefined || value === "") return value;
  try {
    const u = new URL(value);
    if (u.protocol === "http:" || u.protocol === "https:") return value.replace(/\/$/, "");
  } catch {}
  throw invalidArgument("invalid_url", `${field} must be an absolute http(s) URL`, { details: { field } });
}

interface ImportedSource {
  serviceType: "api" | "mcp_server";
  title: string;
  summary: string;
  description: string;
  version: string;
  contact: Contact;
  documentationUrl: string;
  logo: string;
  baseUrl: string | null;
  mcpServerUrl: string | null;
  documentUrl: string | null;
  securitySchemes: ServiceRecord["securitySchemes"];
  tools: (ToolDraft & { deprecated?: boolean })[];
  warnings: string[];
  /** An MCP server that answered 401: its authorization server, and Toolport's client there (issue 32). */
  mcpOAuth?: DiscoveredMcpAuthorization;
}

/** The name of the one security scheme an `mcp_server` service may have. */
const MCP_SCHEME_NAME = "mcp_server";
const MCP_SCHEME_FIELD = "mcp_server.security_scheme";
/** Headers a publisher may not claim for an API key: the transport's own. */
const RESERVED_HEADERS = new Set([
  "host",
  "connection",
  "content-length",
  "content-type",
  "transfer-encoding",
  "accept",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
]);

/** The scheme an MCP server's publisher declared: `http` bearer or basic, or `apiKey` in a header. */
function checkMcpScheme(s: SecuritySchemeInfo): SecuritySchemeInfo {
  const bad = (field: string, message: string) =>
    invalidArgument("invalid_security_scheme", `${field} ${message}`, { details: { field } });
  if (s.type === "http") {
    const scheme = s.scheme?.toLowerCase();
    if (scheme !== "bearer" && scheme !== "basic") throw bad(`${MCP_SCHEME_FIELD}.scheme`, "must be bearer or basic");
    return { name: MCP_SCHEME_NAME, type: "http", scheme, description: s.description };
  }
  if (s.type === "apiKey") {
    if (s.location !== "header") {
      throw bad(`${MCP_SCHEME_FIELD}.in`, "must be header: MCP servers take credentials in request headers");
    }
    const header = s.parameterName ?? "";
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/.test(header) || RESERVED_HEADERS.has(header.toLowerCase())) {
      throw bad(`${MCP_SCHEME_FIELD}.name`, "must be the name of the HTTP header that carries the key (e.g. X-Api-Key)");
    }
    return { name: MCP_SCHEME_NAME, type: "apiKey", location: "header", parameterName: header, description: s.description };
  }
  throw bad(`${MCP_SCHEME_FIELD}.type`, "must be http (scheme bearer or basic) or apiKey (in header)");
}

/** The credential kind a scheme takes. */
const kindOf = (scheme: SecuritySchemeInfo) =>
  scheme.type === "apiKey" ? "api_key" : scheme.type === "oauth2" ? "oauth2" : (scheme.scheme as "bearer" | "basic");

/**
 * The importers load on first use: the MCP client and the OpenAPI fetcher's module (its converter and
 * validator) are about half of the catalog's module loading, which a restart would otherwise spend before
 * its rebuild (the import thread loads its own copy after the rebuild, import-pool.ts warm).
 */
const mcpImporter = () => import("../publishing/mcp.js");
const openApiImporter = () => import("../publishing/openapi.js");

/** Headers that carry the publisher's import credential; checked against the declared scheme. */
async function importHeaders(
  scheme: SecuritySchemeInfo | undefined,
  material: CredentialMaterial | undefined,
): Promise<Record<string, string>> {
  if (!material) return {};
  if (!scheme) {
    throw invalidArgument("missing_security_scheme", "mcp_server.credential needs mcp_server.security_scheme", {
      details: { field: MCP_SCHEME_FIELD },
    });
  }
  // An OAuth connection's token (re-import of an OAuth-protected server) comes from the catalog itself.
  if (material.type !== "oauth2" && checkMaterial(material).reference) {
    throw invalidArgument(
      "invalid_credential",
      "mcp_server.credential must hold the secret itself: env:// and vault:// references are resolved only when a tool is called",
      { details: { field: "mcp_server.credential" } },
    );
  }
  if (material.type !== kindOf(scheme)) {
    throw invalidArgument("credential_scheme_mismatch", `mcp_server.credential must be ${kindOf(scheme)}, as the scheme says`, {
      details: { field: "mcp_server.credential" },
    });
  }
  return (await mcpImporter()).mcpAuthHeaders(scheme, material);
}

/**
 * What a document or an MCP server says, with U+0000 in any text replaced by U+FFFD: Postgres text and
 * jsonb cannot hold NUL, and a fetched document is not the caller's to correct (an inline one with NUL
 * is refused by the gateway already).
 */
async function readSource(
  deps: CatalogDeps,
  source: SourceInput,
  signal?: AbortSignal,
  /** Off for a preview: discovering an OAuth-protected server registers a client there. */
  discoverOAuth = true,
): Promise<ImportedSource> {
  if (source.kind === "mcp_server") {
    // OAuth is never declared: it is what publishing found behind the server's 401 (kept on re-import).
    const declared = source.securityScheme;
    const scheme = declared && (declared.type === "oauth2" && declared.mcpAuthorization ? declared : checkMcpScheme(declared));
    const headers = await importHeaders(scheme, source.credential);
    let mcp: Awaited<ReturnType<Awaited<ReturnType<typeof mcpImporter>>["importMcpServer"]>>;
    try {
      mcp = await (await mcpImporter()).importMcpServer(source.url, deps.outbound, headers);
    } catch (err) {
      // Issue 32: a server that answers 401 to a publish without a credential may be OAuth-protected.
      if (!(err instanceof DomainError) || err.reason !== "mcp_server_unauthorized" || source.credential) throw err;
      if (scheme) throw err;
      if (!discoverOAuth) return protectedMcpPreview(source.url);
      const found = await discoverMcpAuthorization(deps, source.url);
      if (!found) throw err;
      return protectedMcpSource(source.url, found);
    }
    return replaceNul<ImportedSource>({
      serviceType: "mcp_server",
      title: mcp.title,
      summary: "",
      description: mcp.description,
      version: mcp.version,
      contact: { name: "", url: "", email: "" },
      documentationUrl: "",
      logo: "",
      baseUrl: null,
      mcpServerUrl: source.url,
      documentUrl: null,
      securitySchemes: scheme ? [scheme] : [],
      tools: mcp.tools.map((t) => ({ ...t, security: scheme ? [scheme.name] : [] })),
      warnings: mcp.warnings,
    });
  }
  if (!source.documentText && !source.documentUrl) {
    throw invalidArgument("missing_document", "api needs document_text (the OpenAPI document) or document_url", {
      details: { field: "api" },
    });
  }
  const baseUrl = checkUrl(source.baseUrl, "api.base_url");
  const text =
    source.documentText ?? (await (await openApiImporter()).fetchDocument(source.documentUrl as string, deps.outbound));
  // Seconds of CPU for a large document: on a worker thread, so nobody else waits (import-pool.ts). The
  // thread replaces NUL in what it read, so this thread does not walk every tool again.
  const imported = await deps.importer.import({ text, documentUrl: source.documentUrl, baseUrl }, signal);
  return {
    serviceType: "api",
    ...imported,
    mcpServerUrl: null,
    documentUrl: replaceNul(source.documentUrl ?? null),
  };
}

/**
 * An OAuth-protected MCP server, published before its tools can be listed: its scheme is oauth2 with what
 * discovery found, and its tools are listed once the publisher connects and re-imports.
 */
function protectedMcpSource(url: string, found: DiscoveredMcpAuthorization): ImportedSource {
  const a = found.authorization;
  const registered = found.registration
    ? `Toolport registered as an OAuth client at ${a.issuer} (${found.registration.kind === "cimd" ? "client metadata document" : "dynamic client registration"})`
    : `${found.registrationProblem ?? "Toolport could not register at the authorization server"}: register a client at ${a.issuer} with the redirect URI of GET /v1/services/{id}/oauth-client and give it with PUT /v1/services/{id}/oauth-client`;
  return {
    ...mcpSourceOf(url),
    securitySchemes: [mcpOAuthScheme(MCP_SCHEME_NAME, found)],
    tools: [],
    warnings: [
      `the MCP server is protected by OAuth (authorization server ${a.issuer}); ${registered}. Its tools are listed once you connect your account on the service's connect page and re-import it (POST /v1/services/{id}/reimport)`,
    ],
    mcpOAuth: found,
  };
}

/** The fields of an MCP server's source that its address alone gives (its tools and schemes come later). */
function mcpSourceOf(url: string) {
  return {
    serviceType: "mcp_server" as const,
    title: new URL(url).host,
    summary: "",
    description: "",
    version: "",
    contact: { name: "", url: "", email: "" },
    documentationUrl: "",
    logo: "",
    baseUrl: null,
    mcpServerUrl: url,
    documentUrl: null,
  };
}

/** What a preview says of a server that answered 401: publishing it looks for its OAuth authorization server. */
function protectedMcpPreview(url: string): ImportedSource {
  return {
    ...mcpSourceOf(url),
    securitySchemes: [],
    tools: [],
    warnings: [
      "the MCP server answered 401 (it needs a credential): publishing it looks for its OAuth authorization server, and its tools are listed once you connect your account and re-import; or give mcp_server.security_scheme and mcp_server.credential to list them now",
    ],
  };
}

export interface PublishPreview {
  name: string;
  serviceType: "api" | "mcp_server";
  description: string;
  version: string;
  baseUrl: string | null;
  securitySchemes: string[];
  tools: (ToolDraft & { deprecated?: boolean })[];
  warnings: string[];
}

/**
 * What createService would make of a source, read the same way and refused for the same defects, with
 * nothing stored, no event and no OAuth registration: the console shows it before the publisher commits.
 */
export async function previewService(
  deps: CatalogDeps,
  input: { source?: SourceInput; organizationId?: string },
  callerOrNull: Caller | null,
  signal?: AbortSignal,
): Promise<PublishPreview> {
  const caller = requireCaller(callerOrNull);
  assertMayManageCatalog(caller, "publish services");
  if (!input.source) {
    throw invalidArgument(
      "missing_source",
      "give the tools' source: api (an OpenAPI document) or mcp_server (an MCP server URL)",
      {
        details: { field: "source" },
      },
    );
  }
  assertCanPublishInto(input.organizationId || caller.organizationId, caller);
  const source = await readSource(deps, input.source, signal, false);
  return {
    name: source.title || "Untitled service",
    serviceType: source.serviceType,
    description: source.description,
    version: source.version,
    baseUrl: source.baseUrl,
    securitySchemes: source.securitySchemes.map((s) => s.name),
    tools: source.tools,
    warnings: source.warnings,
  };
}

/** Validates the service fields of a create before anything slow (fetching, connecting) happens. */
function checkCreateFields(input: CreateServiceInput) {
  const visibility = oneOf(input.visibility, visibilities, "visibility") ?? "private";
  const price = checkPrice(input.defaultPricePerCallCents, "default_price_per_call_cents") ?? 0n;
  const slug = input.slug !== undefined ? checkSlug(input.slug, "slug") : undefined;
  if (input.name !== undefined && input.name.trim() === "") {
    throw invalidArgument("invalid_name", "name must not be empty", { details: { field: "name" } });
  }
  return { visibility, price, slug };
}

export async function createService(
  deps: CatalogDeps,
  input: CreateServiceInput,
  callerOrNull: Caller | null,
  /** The call's: a caller that stops waiting (its deadline) gives up its place in the import pool. */
  signal?: AbortSignal,
): Promise<PublishResult> {
  const caller = requireCaller(callerOrNull);
  assertMayManageCatalog(caller, "publish services");
  if (!input.source) {
    throw invalidArgument(
      "missing_source",
      "give the tools' source: api (an OpenAPI document) or mcp_server (an MCP server URL)",
      {
        details: { field: "source" },
      },
    );
  }
  const organizationId = input.organizationId || caller.organizationId;
  assertCanPublishInto(organizationId, caller);
  const { visibility, price, slug: chosenSlug } = checkCreateFields(input);
  const source = await readSource(deps, input.source, signal);
  const name = input.name?.trim() || source.title || "Untitled service";

  const id = randomUUID();
  // Two publishes of same-named services at once can pick the same free slug (a service's or its tools'):
  // the later insert then breaks a unique index and is tried again with fresh slugs, a few times, instead
  // of answering 500. A slug the caller chose is checked above and keeps its 409.
  const result = await retryOnSlugRace(deps, () =>
    changeTools(deps, async (tx) => {
      let slug: string;
      if (chosenSlug) {
        if (await tx.slugTaken("services", chosenSlug)) {
          throw conflict("slug_taken", `the slug ${chosenSlug} is already used by another service`, {
            details: { field: "slug" },
          });
        }
        slug = chosenSlug;
      } else {
        slug = await tx.freeServiceSlug(slugify(name));
      }
      const record: NewService = {
        id,
        slug,
        name,
        summary: input.summary ?? source.summary,
        description: input.description ?? source.description,
        serviceType: source.serviceType,
        category: input.category ?? "",
        logo: input.logo ?? source.logo,
        contact: { ...source.contact, ...stripUndefined(input.contact ?? {}) },
        documentationUrl: input.documentationUrl ?? source.documentationUrl,
        verificationTier: "unverified",
        status: "active",
        visibility,
        isDemo: false,
        version: input.version ?? source.version,
        organizationId,
        ownerAccountId: caller.accountId,
        baseUrl: source.baseUrl,
        mcpServerUrl: source.mcpServerUrl,
        openapiDocumentUrl: source.documentUrl,
        securitySchemes: source.securitySchemes,
        importedAt: new Date(),
      };
      const service = await tx.insertService(record);
      if (source.mcpOAuth) await storeDiscoveredClient(deps, tx, id, source.mcpOAuth, caller.accountId);
      const from = input.fromDirectory;
      if (from && !(await tx.recordDirectoryImport(id, from.entry, from.version))) {
        throw conflict("already_imported", `${from.entry} is already in the catalog: it was imported from the directory before`, {
          details: { name: from.entry },
        });
      }
      const { tools } = await tx.upsertToolDrafts(source.tools, {
        serviceId: id,
        serviceSlug: slug,
        pricePerCallCents: price,
        pathFor: source.serviceType === "mcp_server" ? () => `${id}/` : undefined,
      });
      await tx.enqueueToolChanged(tools, "upsert");
      return { service, tools };
    }),
  );
  await refreshIndex(
    deps,
    result.tools.map((t) => t.id),
  );
  deps.log.info({ service_id: id, tools: result.tools.length, source: source.serviceType }, "service published");
  const warnings = source.warnings.map((w) =>
    w.replaceAll("{id}", id).replace("the service's connect page", configurationUrl(deps.publicUrl, id)),
  );
  return { ...result, warnings };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Runs `run` again, up to `attempts` in all, while it fails on a slug a concurrent publish took first. */
async function retryOnSlugRace<T>(deps: CatalogDeps, run: () => Promise<T>, attempts = 4): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= attempts || !deps.store.isSlugRace(err)) throw err;
    }
  }
}

/**
 * A transaction that changes tools (and writes their toolport.catalog.tool.changed events), whose events
 * go out before the caller gets its answer: execution empties its tool cache on them, and a sunset,
 * deactivated, deleted or newly priced tool must be refused on the caller's very next call. On a
 * timeout the relay still publishes them shortly (nothing is lost).
 */
async function changeTools<T>(deps: CatalogDeps, fn: (tx: CatalogTx) => Promise<T>): Promise<T> {
  const result = await deps.store.transaction(fn);
  if (!(await deps.publishEvents())) deps.log.warn("tool change events not yet published; the relay will retry them");
  return result;
}

/** After commit: this replica's index sees the change now; failures only delay it until the event. */
async function refreshIndex(deps: CatalogDeps, toolIds: string[]): Promise<void> {
  try {
    await deps.index.refresh(toolIds);
  } catch (err) {
    deps.log.warn({ err: (err as Error).message }, "search index refresh failed; the change event will retry it");
  }
}

/** A service the caller may manage; 404 when it may not even see it, 403 when it may see but not manage. */
export async function managedService(deps: CatalogDeps, idOrSlug: string, callerOrNull: Caller | null): Promise<ServiceRecord> {
  const caller = requireCaller(callerOrNull);
  const service = await deps.store.findService(idOrSlug.trim());
  if (!service || !canSee(service, caller)) {
    throw notFound("service_not_found", `service ${idOrSlug} not found`, { details: { service_id: idOrSlug } });
  }
  assertCanManage(service, caller);
  return service;
}

/**
 * A service as its publisher's views show it (GET /services/{id} and its tools): to every member of its
 * organization, any role (members read what their organization publishes, as GET /services lists it),
 * and to whoever may manage it; 404 when the caller may not even see it, 403 when it sees but is not in it.
 */
export async function readableService(deps: CatalogDeps, idOrSlug: string, callerOrNull: Caller | null): Promise<ServiceRecord> {
  const caller = requireCaller(callerOrNull);
  const service = await deps.store.findService(idOrSlug.trim());
  if (!service || !canSee(service, caller)) {
    throw notFound("service_not_found", `service ${idOrSlug} not found`, { details: { service_id: idOrSlug } });
  }
  if (service.organizationId === null || service.organizationId !== caller.organizationId) assertCanManage(service, caller);
  return service;
}

export async function listManagedServices(
  deps: CatalogDeps,
  callerOrNull: Caller | null,
  organizationId?: string,
): Promise<ServiceRecord[]> {
  const caller = requireCaller(callerOrNull);
  if (caller.isPlatformAdmin) return deps.store.listServices(organizationId ? { organizationId } : {});
  if (organizationId && organizationId !== caller.organizationId) {
    // As everywhere (SERVICE-SPEC: "organization unknown or caller not a member" is 404): whether another
    // organization exists is not the caller's to learn.
    throw notFound("organization_not_found", `organization ${organizationId} does not exist or you are not a member of it`, {
      details: { organization_id: organizationId },
    });
  }
  return deps.store.listServices({ organizationId: caller.organizationId });
}

export interface UpdateServiceInput {
  name?: string;
  slug?: string;
  summary?: string;
  description?: string;
  category?: string;
  logo?: string;
  contact?: Partial<Contact>;
  documentationUrl?: string;
  version?: string;
  visibility?: string;
  status?: string;
  verificationTier?: string;
  baseUrl?: string;
  mcpServerUrl?: string;
}

export async function updateService(
  deps: CatalogDeps,
  idOrSlug: string,
  input: UpdateServiceInput,
  caller: Caller | null,
): Promise<ServiceRecord> {
  assertMayManageCatalog(requireCaller(caller), "edit services");
  const service = await managedService(deps, idOrSlug, caller);
  const tier = oneOf(input.verificationTier, verificationTiers, "verification_tier");
  if (tier !== undefined && !caller?.isPlatformAdmin) {
    throw permissionDenied("platform_admin_only", "only platform admins set verification_tier", {
      details: { field: "verification_tier" },
    });
  }
  if (input.name !== undefined && input.name.trim() === "") {
    throw invalidArgument("invalid_name", "name must not be empty", { details: { field: "name" } });
  }
  const patch: Partial<NewService> = {
    name: input.name?.trim(),
    slug: input.slug !== undefined ? checkSlug(input.slug, "slug") : undefined,
    summary: input.summary,
    description: input.description,
    category: input.category,
    logo: input.logo,
    contact: input.contact ? { ...service.contact, ...stripUndefined(input.contact) } : undefined,
    documentationUrl: input.documentationUrl,
    version: input.version,
    visibility: oneOf<Visibility>(input.visibility, visibilities, "visibility"),
    status: oneOf<ServiceStatus>(input.status, serviceStatuses, "status"),
    verificationTier: tier as VerificationTier | undefined,
    baseUrl: checkUrl(input.baseUrl, "base_url"),
    mcpServerUrl: checkUrl(input.mcpServerUrl, "mcp_server_url"),
  };
  const updated = await changeTools(deps, async (tx) => {
    if (patch.slug && patch.slug !== service.slug && (await tx.slugTaken("services", patch.slug, service.id))) {
      throw conflict("slug_taken", `the slug ${patch.slug} is already used by another service`, { details: { field: "slug" } });
    }
    const row = await tx.updateService(service.id, patch);
    const tools = await tx.toolIdsOfService(service.id);
    await tx.enqueueToolChanged(
      tools.map((t) => ({ id: t.id, serviceId: service.id, revision: t.revision })),
      "upsert",
    );
    return row;
  });
  await refreshIndex(
    deps,
    (await deps.store.toolIdsOfService(service.id)).map((t) => t.id),
  );
  return updated;
}

export async function reimportService(
  deps: CatalogDeps,
  idOrSlug: string,
  api: { documentText?: string; documentUrl?: string; baseUrl?: string } | undefined,
  caller: Caller | null,
  signal?: AbortSignal,
): Promise<PublishResult> {
  assertMayManageCatalog(requireCaller(caller), "reimport services");
  const service = await managedService(deps, idOrSlug, caller);
  let source: SourceInput;
  if (service.serviceType === "mcp_server") {
    // The declared scheme stays; the tools are listed with the caller's connected credential, if any.
    const scheme = service.securitySchemes[0];
    const connected =
      scheme && caller
        ? (
            await resolveCredential(deps, {
              serviceId: service.id,
              accountId: caller.accountId,
              organizationId: caller.organizationId,
            })
          ).credential
        : null;
    let usable =
      scheme !== undefined &&
      connected?.material.type === kindOf(scheme) &&
      (connected.material.type === "oauth2" || !checkMaterial(connected.material).reference);
    let material = usable ? connected?.material : undefined;
    if (connected && material?.type === "oauth2" && caller) {
      // An OAuth-protected server (issue 32): the publisher's connection, its token refreshed when due.
      const { tokens } = await refreshOAuthConnection(deps, {
        connectionId: connected.id,
        accountId: caller.accountId,
        organizationId: caller.organizationId,
        minValidSeconds: 60,
      });
      material = tokens;
      usable = true;
    }
    source = {
      kind: "mcp_server",
      url: service.mcpServerUrl as string,
      securityScheme: scheme,
      credential: usable ? material : undefined,
    };
  } else if (service.serviceType === "api") {
    const documentUrl = api?.documentUrl ?? (api?.documentText ? undefined : (service.openapiDocumentUrl ?? undefined));
    if (!api?.documentText && !documentUrl) {
      throw invalidArgument(
        "missing_document",
        "this service was imported from an inline document; send the new one as api.document_text",
        {
          details: { field: "api" },
        },
      );
    }
    source = { kind: "api", documentText: api?.documentText, documentUrl, baseUrl: api?.baseUrl };
  } else {
    throw invalidArgument("not_reimportable", "built-in services have no source to re-import", {
      details: { service_id: service.id },
    });
  }
  if (source.kind === "mcp_server" && source.securityScheme?.type === "oauth2" && !source.credential) {
    // Its tools are listed with the caller's own OAuth connection, which it has not made (or it broke).
    const url = configurationUrl(deps.publicUrl, service.id);
    throw invalidArgument(
      "mcp_server_unauthorized",
      `the MCP server needs an OAuth connection to list its tools: connect your account at ${url} and re-import`,
      { details: { service_id: service.id, configuration_url: url } },
    );
  }
  const imported = await readSource(deps, source, signal).catch((err) => {
    if (!(err instanceof DomainError) || err.reason !== "mcp_server_unauthorized") throw err;
    if (source.kind !== "mcp_server" || source.credential) throw err;
    throw invalidArgument(
      "mcp_server_unauthorized",
      `the MCP server needs a credential to list its tools: connect a credential for this service (PUT /v1/services/${service.id}/credentials) and re-import`,
      { details: { service_id: service.id }, cause: err },
    );
  });
  const result = await changeTools(deps, async (tx) => {
    const { tools, missing } = await tx.upsertToolDrafts(imported.tools, {
      serviceId: service.id,
      serviceSlug: service.slug,
      pricePerCallCents: 0n,
      pathFor: service.serviceType === "mcp_server" ? () => `${service.id}/` : undefined,
    });
    const deactivated = await tx.setToolsStatus(missing, "inactive");
    const updated = await tx.updateService(service.id, {
      securitySchemes: imported.securitySchemes,
      importedAt: new Date(),
      ...(service.serviceType === "api" ? { baseUrl: api?.baseUrl ?? imported.baseUrl ?? service.baseUrl } : {}),
      ...(source.kind === "api" && source.documentUrl ? { openapiDocumentUrl: source.documentUrl } : {}),
    });
    await tx.enqueueToolChanged([...tools, ...deactivated], "upsert");
    return { service: updated, tools, deactivatedToolIds: deactivated.map((t) => t.id) };
  });
  await refreshIndex(deps, [...result.tools.map((t) => t.id), ...result.deactivatedToolIds]);
  return { ...result, warnings: imported.warnings };
}

export async function deleteService(deps: CatalogDeps, idOrSlug: string, caller: Caller | null): Promise<void> {
  assertMayManageCatalog(requireCaller(caller), "delete services");
  const service = await managedService(deps, idOrSlug, caller);
  const toolIds = await changeTools(deps, async (tx) => {
    const ids = await tx.deleteService(service.id);
    await tx.enqueueToolChanged(
      ids.map((id) => ({ id, serviceId: service.id, revision: 0n })),
      "delete",
    );
    return ids;
  });
  await deps.index.remove(toolIds).catch(() => {});
}

export interface UpdateToolInput {
  name?: string;
  slug?: string;
  description?: string;
  tips?: string;
  tags?: string[];
  output?: Record<string, unknown>;
  version?: string;
  pricePerCallCents?: bigint;
  sideEffecting?: boolean;
  status?: string;
  deprecated?: boolean;
  deprecationMessage?: string;
  sunsetDate?: Date;
  passthroughReason?: string;
}

async function managedTool(deps: CatalogDeps, idOrSlug: string, callerOrNull: Caller | null) {
  const caller = requireCaller(callerOrNull);
  const pair = await deps.store.findTool(idOrSlug.trim());
  if (!pair || !canSee(pair.service, caller))
    throw notFound("tool_not_found", `tool ${idOrSlug} not found`, { details: { tool_id: idOrSlug } });
  assertCanManage(pair.service, caller);
  return pair;
}

/**
 * Edits a tool. Deprecation: `deprecated: true` with an optional message and sunset date; a sunset
 * date alone needs the tool to be (or become) deprecated; `deprecated: false` clears message and date.
 */
export async function updateTool(
  deps: CatalogDeps,
  idOrSlug: string,
  input: UpdateToolInput,
  caller: Caller | null,
): Promise<ToolRecord> {
  assertMayManageCatalog(requireCaller(caller), "edit tools");
  const { tool } = await managedTool(deps, idOrSlug, caller);
  if (input.name !== undefined && input.name.trim() === "") {
    throw invalidArgument("invalid_name", "name must not be empty", { details: { field: "name" } });
  }
  const patch: ToolPatch = {
    name: input.name?.trim(),
    slug: input.slug !== undefined ? checkSlug(input.slug, "slug") : undefined,
    description: input.description,
    tips: input.tips === undefined ? undefined : input.tips === "" ? null : input.tips,
    tags: input.tags?.map((t) => t.trim()).filter(Boolean),
    output: input.output,
    version: input.version,
    pricePerCallCents: checkPrice(input.pricePerCallCents, "price_per_call_cents"),
    sideEffecting: input.sideEffecting,
    status: oneOf(input.status, toolStatuses, "status"),
    passthroughReason:
      input.passthroughReason === undefined ? undefined : input.passthroughReason === "" ? null : input.passthroughReason,
  };
  const willBeDeprecated = input.deprecated ?? tool.deprecated;
  if (input.deprecated === false) {
    if (input.sunsetDate || input.deprecationMessage) {
      throw invalidArgument("invalid_deprecation", "a sunset_date or deprecation_message needs deprecated: true", {
        details: { field: "deprecated" },
      });
    }
    Object.assign(patch, { deprecated: false, deprecationMessage: null, sunsetDate: null });
  } else {
    if ((input.sunsetDate || input.deprecationMessage !== undefined) && !willBeDeprecated) {
      throw invalidArgument("invalid_deprecation", "a sunset_date or deprecation_message needs deprecated: true", {
        details: { field: "deprecated" },
      });
    }
    if (input.deprecated === true) patch.deprecated = true;
    if (input.deprecationMessage !== undefined) patch.deprecationMessage = input.deprecationMessage || null;
    if (input.sunsetDate) patch.sunsetDate = input.sunsetDate;
  }
  const updated = await changeTools(deps, async (tx) => {
    if (patch.slug && patch.slug !== tool.slug && (await tx.slugTaken("tools", patch.slug, tool.id))) {
      throw conflict("slug_taken", `the slug ${patch.slug} is already used by another tool`, { details: { field: "slug" } });
    }
    const row = await tx.updateTool(tool.id, patch);
    await tx.enqueueToolChanged([row], "upsert");
    return row;
  });
  await refreshIndex(deps, [tool.id]);
  return updated;
}

export async function deleteTool(deps: CatalogDeps, idOrSlug: string, caller: Caller | null): Promise<void> {
  assertMayManageCatalog(requireCaller(caller), "delete tools");
  const { tool } = await managedTool(deps, idOrSlug, caller);
  await changeTools(deps, async (tx) => {
    await tx.deleteTool(tool.id);
    await tx.enqueueToolChanged([{ ...tool, revision: tool.revision + 1n }], "delete");
  });
  await deps.index.remove([tool.id]).catch(() => {});
}

/** Every tool of a readable service, inactive and sunset ones included. */
export async function listManagedServiceTools(deps: CatalogDeps, idOrSlug: string, caller: Caller | null) {
  const service = await readableService(deps, idOrSlug, caller);
  return deps.store.listToolsWithService({ serviceId: service.id, includeUnavailable: true });
}
