/**
 * The catalog domain's storage ports (domain/ports.ts) on Postgres: each method is one of the store
 * modules' functions on the pool, or, inside `transaction`, on the transaction's client. Built once per
 * start in src/deps.ts.
 */
import { type Pool, type PoolClient, withTransaction } from "@toolport/kit/pg";
import type { CatalogStore, CatalogTx } from "../domain/ports.js";
import { enqueueToolChanged } from "../events/tool-changed.js";
import * as catalog from "./catalog-store.js";
import * as credentials from "./credentials-store.js";
import * as directory from "./directory-store.js";
import * as executions from "./executions-store.js";
import * as oauth from "./oauth-store.js";
import type { PageCache } from "./page-cache.js";
import type { Queryable } from "./rows.js";
import * as pages from "./tool-pages.js";

/** `pool`'s catalog; the Tool shape's rows are kept in `cache` by version between requests. */
export function pgCatalogStore(pool: Pool, cache: PageCache): CatalogStore {
  return {
    ...onBoth(pool),
    findTool: (idOrSlug) => catalog.findTool(pool, idOrSlug),
    listToolsWithService: (filter) => catalog.listToolsWithService(pool, filter),
    unknownIds: (table, ids) => catalog.unknownIds(pool, table, ids),
    scopesOfServiceTools: (serviceId, schemeName) => catalog.scopesOfServiceTools(pool, serviceId, schemeName),
    callableTools: (who, services, tools, limit) => catalog.callableTools(pool, who, services, tools, limit),
    toolsWithServices: (who, ids) => catalog.toolsWithServices(pool, who, ids),
    serviceNamesById: (who, ids) => catalog.serviceNamesById(pool, who, ids),

    listServices: (filter) => catalog.listServices(pool, filter),
    serviceStats: (serviceIds) => catalog.serviceStats(pool, serviceIds),
    servicesOnDomain: (domain) => catalog.servicesOnDomain(pool, domain),

    listToolPage: (reader, filter, page) => pages.listToolPage(pool, cache, reader, filter, page),
    serviceToolPage: (serviceId, page) => pages.serviceToolPage(pool, cache, serviceId, page),
    publicServicePage: (page) => pages.publicServicePage(pool, page),
    usableTools: (reader, filter, limit) => pages.usableTools(pool, reader, filter, limit),
    pageToolsByIds: (ids) => pages.pageToolsByIds(pool, cache, ids),
    starterTools: (popular, limit) => pages.starterTools(pool, popular, limit),
    toolNamed: (reader, name) => pages.toolNamed(pool, reader, name),
    exactMatchIds: (reader, publicOnly, query, limit) => pages.exactMatchIds(pool, reader, publicOnly, query, limit),

    putCredential: (c) => credentials.putCredential(pool, c),
    credentialsFor: (serviceId, accountId, organizationId) =>
      credentials.credentialsFor(pool, serviceId, accountId, organizationId),
    servicesWithCredential: (serviceIds, accountId, organizationId) =>
      credentials.servicesWithCredential(pool, serviceIds, accountId, organizationId),
    deleteCredential: (serviceId, scope, ownerId) => credentials.deleteCredential(pool, serviceId, scope, ownerId),

    deleteOAuthClient: (serviceId) => oauth.deleteOAuthClient(pool, serviceId),
    insertPendingAuthorization: (p) => oauth.insertPendingAuthorization(pool, p),
    takePendingAuthorization: (stateHash) => oauth.takePendingAuthorization(pool, stateHash),
    connectionsOf: (accountId, organizationId) => oauth.connectionsOf(pool, accountId, organizationId),
    findConnection: (id) => oauth.findConnection(pool, id),
    addWantedScopes: (id, scopes) => oauth.addWantedScopes(pool, id, scopes),
    deleteConnection: (id) => oauth.deleteConnection(pool, id),

    directoryImports: (entries) => directory.directoryImports(pool, entries),

    reliabilityAggregates: (toolIds, windowDays) => executions.reliabilityAggregates(pool, toolIds, windowDays),
    popularTools: (windowDays, limit) => executions.popularTools(pool, windowDays, limit),
    toolsUsedBy: (accountId, windowDays) => executions.toolsUsedBy(pool, accountId, windowDays),
    usedTogether: (toolIds, windowDays, limit) => executions.usedTogether(pool, toolIds, windowDays, limit),

    transaction: (work) => withTransaction(pool, (client) => work(pgCatalogTx(client))),
    isSlugRace: catalog.isSlugRace,
  };
}

/** The writes (and reads) of one transaction, on its client. */
function pgCatalogTx(client: PoolClient): CatalogTx {
  return {
    async exclusive(key) {
      await client.query("SELECT pg_advisory_xact_lock($1)", [key]);
    },
    ...onBoth(client),
    slugTaken: (table, slug, exceptId) => catalog.slugTaken(client, table, slug, exceptId),
    freeServiceSlug: (base) => catalog.freeServiceSlug(client, base),
    insertService: (s) => catalog.insertService(client, s),
    updateService: (id, patch) => catalog.updateService(client, id, patch),
    deleteService: (id) => catalog.deleteService(client, id),
    upsertToolDrafts: (drafts, options) => catalog.upsertToolDrafts(client, drafts, options),
    updateTool: (id, patch) => catalog.updateTool(client, id, patch),
    setToolsStatus: (ids, status) => catalog.setToolsStatus(client, ids, status),
    deleteTool: (id) => catalog.deleteTool(client, id),
    recordDirectoryImport: (serviceId, entry, version) => directory.recordDirectoryImport(client, serviceId, entry, version),
    enqueueToolChanged: (tools, kind) => enqueueToolChanged(client, tools, kind),
    lockConnection: (id) => oauth.findConnection(client, id, true),
    storeRefreshedTokens: (id, sealed, expiresAt, scopes) => oauth.storeRefreshedTokens(client, id, sealed, expiresAt, scopes),
  };
}

/** What the store and a transaction both do, on the pool or on the transaction's client. */
function onBoth(
  q: Queryable,
): Pick<
  CatalogStore & CatalogTx,
  "findService" | "toolIdsOfService" | "putOAuthClient" | "findOAuthClient" | "markConnectionBroken"
> {
  return {
    findService: (idOrSlug) => catalog.findService(q, idOrSlug),
    toolIdsOfService: (serviceId) => catalog.toolIdsOfService(q, serviceId),
    putOAuthClient: (c, createdBy) => oauth.putOAuthClient(q, c, createdBy),
    findOAuthClient: (serviceId) => oauth.findOAuthClient(q, serviceId),
    markConnectionBroken: (id, reason) => oauth.markConnectionBroken(q, id, reason),
  };
}
