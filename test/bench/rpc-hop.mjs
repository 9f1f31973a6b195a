// The cost of one call between roles, side by side in one run, for one representative unary method:
// toolport.catalog.v1.CatalogService/ResolveToolForCall (execution calls it before every tool call) with
// a response filled like a real REST tool (strings, six parameters, a security scheme, an input schema of
// ~2 KB of JSON). The server implementation returns a prebuilt response, so what is measured is the hop.
//   Across processes (the server is a child process of this one):
//     (1)  connect-node gRPC client (createGrpcTransport, HTTP/2 h2c) -> connect-node server
//          (connectNodeAdapter on http2.createServer), both with connect-node's defaults as the kit uses
//          them: the client accepts gzip and br, so the server gzips every response of 1 KiB or more;
//     (1u) the same without compression: the client with acceptCompression: [] -> the same server;
//     (2)  @grpc/grpc-js client (Client.makeUnaryRequest, protobuf-es toBinary/fromBinary) -> the same
//          connect-node server (grpc-js always sends grpc-accept-encoding: identity,deflate,gzip, so the
//          server gzips the response);
//     (2u) the grpc-js client -> a second connect-node server with acceptCompression: [] (no compression);
//     (3)  @grpc/grpc-js client -> @grpc/grpc-js server (Server.addService, protobuf-es serializers);
//     (7)  the kit on both sides, as services call each other across processes: createServiceClient
//          (services/lib/kit/dist/rpc.js) -> startRpcServer in the child, with the kit's client and server
//          interceptors (request scope, principal, logging at "silent"); whichever transport the kit's dist
//          uses (grpc-wire.js, grpc-js on both sides, since issue 36; connect-node before).
//   In this process:
//     (4)  connect's createRouterTransport(routes) + createClient;
//     (5)  the kit's local transport as services use it: startRpcServer (services/lib/kit/dist/rpc.js) on
//          port 0 with the service in `routes`, then createServiceClient(CatalogService, that port): the
//          service is hosted here, so switchingTransport (local-rpc.js) runs the call in process, with
//          the kit's client and server interceptors (request scope, principal, logging at "silent");
//     (5b) switchingTransport alone (hostLocally + switchingTransport, no interceptors): the transport
//          without the kit's interceptors, to compare like with like against (4);
//     (6)  the lower bound that breaks the guarantee: the implementation called with the caller's object.
// Every row is warmed up, then the rows take turns in alternating rounds, at concurrency 1 and 16. Per row:
// calls/s, p50, p99, and CPU microseconds per call of this process ("client") and of the server child
// (where there is one). Before the load, rows (4), (5), (5b) and (6) are checked against (1): a thrown
// ConnectError with an ErrorDetail arrives with the same code, message and findDetails(ErrorDetailSchema),
// and the handler mutating its request (and the caller mutating its response) is not seen by the other side.
// Then the ratios to (1) and a verdict for each decision: the in-process transport (the cheapest row that
// keeps the guarantee) and across processes (connect vs grpc-js, "clear" when > 20% apart in CPU per call).
// (3) is uncompressed (grpc-js compresses only when asked to), as are the in-process rows, so the like-for-like
// comparison of the libraries across processes is (1u) against (3), and (2u) for the client alone.
// (7) is checked against (1) like the in-process rows.
// Usage: node test/bench/rpc-hop.mjs [calls per row and concurrency=20000]
//   BENCH_LEVELS=1,16 the concurrencies; BENCH_ROUNDS=5 the alternating rounds; BENCH_WARMUP=2000 the
//   warm-up calls per row and concurrency; BENCH_ROWS=5,5b,6 (ids) only those rows under load (the guarantee
//   checks still run every row; the ratios and verdicts need every row). Runs from dist/ (build first:
//   pnpm build). The children are this script with `serve-connect PORT [plain]`, `serve-grpc PORT` or `serve-kit PORT`.
// node test/bench/rpc-hop.mjs copy [copies=50000] measures the copy alone: CPU per copy of the request and
// the response through an encode and decode, the kit's schema copy (message-copy.ts), protobuf-es `clone`
// and `structuredClone`.
import { readFileSync, realpathSync } from "node:fs";
import http2 from "node:http2";
import { createRequire } from "node:module";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { cleanup, profiled, row, runRounds, start, summary } from "./lib.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));
const kitDir = path.join(root, "services/lib/kit");
const requireKit = createRequire(path.join(kitDir, "package.json"));

/**
 * The ESM entry of a package as services/lib/kit resolves it (its `import` export), so that this script and
 * the kit's dist share one instance of @connectrpc/connect (ConnectError) and @bufbuild/protobuf.
 */
async function esm(specifier) {
  const parts = specifier.split("/");
  const name = parts.slice(0, specifier.startsWith("@") ? 2 : 1).join("/");
  const sub = parts.slice(name.split("/").length).join("/");
  const dir = realpathSync(path.join(kitDir, "node_modules", name));
  const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  const entry = pkg.exports[sub ? `./${sub}` : "."];
  const target = typeof entry === "string" ? entry : (entry.import ?? entry.default);
  return import(pathToFileURL(path.join(dir, target)).href);
}
/** The version of a package as services/lib/kit resolves it. */
const version = (name) =>
  JSON.parse(readFileSync(path.join(realpathSync(path.join(kitDir, "node_modules", name)), "package.json"), "utf8")).version;
const proto = (file) => import(pathToFileURL(path.join(root, "proto/dist", file)).href);
const kit = (file) => import(pathToFileURL(path.join(kitDir, "dist", file)).href);

const { create, fromBinary, isMessage, toBinary, equals } = await esm("@bufbuild/protobuf");
const { Code, ConnectError, createClient, createRouterTransport } = await esm("@connectrpc/connect");
const { CatalogService, ResolveToolForCallRequestSchema, ResolveToolForCallResponseSchema } = await proto(
  "toolport/catalog/v1/catalog_service_pb.js",
);
const { ResolvedToolSchema, SecuritySchemeSchema } = await proto("toolport/catalog/v1/catalog_publishing_pb.js");
const { ParameterLocation, Readiness, ServiceStatus, ServiceType, ToolParameterSchema, ToolStatus } = await proto(
  "toolport/catalog/v1/catalog_resources_pb.js",
);
const { ErrorDetailSchema } = await proto("toolport/common/v1/errors_pb.js");

const METHOD_PATH = `/${CatalogService.typeName}/${CatalogService.method.resolveToolForCall.name}`;
const TIMEOUT_MS = 10_000; // as the kit's clients: every call has a deadline
const TOOL_ID = "3f1c9a52-7d4e-4b8a-9c61-2e5f0b7d8a14";
const REFUSE_ID = "refuse"; // the implementation throws a ConnectError with an ErrorDetail
const MUTATE_ID = "mutate"; // the implementation overwrites fields of its request
const ACCOUNT_ID = "a8d2e6f0-1b3c-4d5e-8f70-9a1b2c3d4e5f";
const ORGANIZATION_ID = "0c7e5a39-2f1d-4b6a-a8e9-5d4c3b2a1f0e";

// ---------------------------------------------------------------------------------------------
// The representative message: a REST tool as the catalog resolves it

const json = (value) => new TextEncoder().encode(JSON.stringify(value));

function inputSchema() {
  const prop = (type, description, extra = {}) => ({ type, description, ...extra });
  return {
    type: "object",
    title: "List repository issues",
    description:
      "List issues in a repository. Only open issues are listed by default. Pull requests are issues too: " +
      "filter them out with the pull_request key of each result when only issues are wanted.",
    properties: {
      owner: prop("string", "The account owner of the repository. The name is not case sensitive.", { minLength: 1 }),
      repo: prop("string", "The name of the repository without the .git extension. Not case sensitive.", {
        minLength: 1,
      }),
      state: prop("string", "Indicates the state of the issues to return.", {
        enum: ["open", "closed", "all"],
        default: "open",
      }),
      labels: prop("string", "A list of comma separated label names, e.g. bug,ui,@high.", {}),
      sort: prop("string", "What to sort results by.", { enum: ["created", "updated", "comments"], default: "created" }),
      direction: prop("string", "The direction to sort the results by.", { enum: ["asc", "desc"], default: "desc" }),
      since: prop("string", "Only show results updated after this time, as an ISO 8601 timestamp.", {
        format: "date-time",
      }),
      assignee: prop("string", "Login of the assignee; `none` for issues with no one assigned, `*` for any.", {}),
      per_page: prop("integer", "The number of results per page (max 100).", { minimum: 1, maximum: 100, default: 30 }),
      page: prop("integer", "The page number of the results to fetch.", { minimum: 1, default: 1 }),
    },
    required: ["owner", "repo"],
    additionalProperties: false,
  };
}

function parameter(name, location, description, type, extra = {}) {
  return create(ToolParameterSchema, { name, location, description, type, ...extra });
}

function resolvedTool() {
  return create(ResolvedToolSchema, {
    id: TOOL_ID,
    slug: "github-list-repository-issues",
    name: "List repository issues",
    serviceId: "9b2d4f6a-8c0e-4a1b-b3d5-e7f9a1c3e5b7",
    serviceName: "GitHub REST API",
    serviceType: ServiceType.API,
    serviceStatus: ServiceStatus.ACTIVE,
    status: ToolStatus.ACTIVE,
    method: "GET",
    path: "/repos/{owner}/{repo}/issues",
    baseUrl: "https://api.github.com",
    parameters: {
      owner: parameter("owner", ParameterLocation.PATH, "The account owner of the repository.", "string", {
        required: true,
      }),
      repo: parameter("repo", ParameterLocation.PATH, "The name of the repository.", "string", { required: true }),
      state: parameter("state", ParameterLocation.QUERY, "State of the issues to return.", "string", {
        defaultJson: json("open"),
        enumJson: json(["open", "closed", "all"]),
      }),
      labels: parameter("labels", ParameterLocation.QUERY, "Comma separated label names.", "string"),
      since: parameter("since", ParameterLocation.QUERY, "Only issues updated after this time.", "string"),
      per_page: parameter("per_page", ParameterLocation.QUERY, "Results per page (max 100).", "integer", {
        defaultJson: json(30),
        minimum: 1,
        maximum: 100,
      }),
    },
    inputSchemaJson: json(inputSchema()),
    securitySchemes: [
      create(SecuritySchemeSchema, {
        name: "bearerAuth",
        type: "http",
        scheme: "bearer",
        bearerFormat: "token",
        description: "A GitHub personal access token or an installation token.",
      }),
    ],
    readiness: Readiness.READY,
    outputJson: json({
      type: "array",
      items: {
        type: "object",
        properties: { number: { type: "integer" }, title: { type: "string" }, state: { type: "string" } },
      },
    }),
    revision: 42n,
  });
}

/** The implementation every row serves (connect server, grpc-js server, in process). */
function implementation(tool) {
  const response = { tool };
  return {
    async resolveToolForCall(req) {
      if (req.toolId === REFUSE_ID)
        throw new ConnectError("refused", Code.InvalidArgument, undefined, [
          {
            desc: ErrorDetailSchema,
            value: { reason: "invalid_parameters", detailsJson: json({ tool_id: "must name a tool" }) },
          },
        ]);
      if (req.toolId === MUTATE_ID) {
        req.accountId = "changed-by-callee";
        req.organizationId = "changed-by-callee";
      }
      return response;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// grpc-js glue: protobuf-es messages as grpc-js serializers

const buffer = (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
const asMessage = (desc, value) => (isMessage(value, desc) ? value : create(desc, value));
const serializeRequest = (value) =>
  buffer(toBinary(ResolveToolForCallRequestSchema, asMessage(ResolveToolForCallRequestSchema, value)));
const deserializeRequest = (bytes) => fromBinary(ResolveToolForCallRequestSchema, bytes);
const serializeResponse = (value) =>
  buffer(toBinary(ResolveToolForCallResponseSchema, asMessage(ResolveToolForCallResponseSchema, value)));
const deserializeResponse = (bytes) => fromBinary(ResolveToolForCallResponseSchema, bytes);

// ---------------------------------------------------------------------------------------------
// Child processes: the servers

/** A child stops when its parent is gone (the bench killed with SIGKILL, say). */
function followParent() {
  const parent = process.ppid;
  setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch {
      process.exit(0);
    }
  }, 1000).unref();
}

// ---------------------------------------------------------------------------------------------
// The benchmark

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A unary call through a grpc-js client, as a promise. */
function grpcCall(client, grpc) {
  return (req) =>
    new Promise((resolve, reject) => {
      client.makeUnaryRequest(
        METHOD_PATH,
        serializeRequest,
        deserializeResponse,
        req,
        new grpc.Metadata(),
        { deadline: Date.now() + TIMEOUT_MS },
        (err, res) => (err ? reject(err) : resolve(res)),
      );
    });
}

/** What a caller sees of the refusal: the comparable parts of the error. */
async function refusal(call) {
  try {
    await call({ toolId: REFUSE_ID, accountId: ACCOUNT_ID, organizationId: ORGANIZATION_ID });
    return { thrown: "nothing" };
  } catch (err) {
    if (!(err instanceof ConnectError))
      return { thrown: err?.constructor?.name ?? typeof err, code: err?.code, message: err?.details ?? err?.message };
    return {
      thrown: "ConnectError",
      code: Code[err.code],
      rawMessage: err.rawMessage,
      message: err.message,
      details: err.findDetails(ErrorDetailSchema),
      cause: err.cause === undefined ? "none" : (err.cause?.constructor?.name ?? typeof err.cause),
    };
  }
}

const sameDetails = (a, b) => a.length === b.length && a.every((d, i) => equals(ErrorDetailSchema, d, b[i]));
const detailText = (details) =>
  details.map((d) => `${d.reason} ${new TextDecoder().decode(d.detailsJson)}`).join("; ") || "(none)";

/** Whether the callee's change to its request and the caller's change to its response stay on their side. */
async function isolation(call, tool) {
  const req = { toolId: MUTATE_ID, accountId: ACCOUNT_ID, organizationId: ORGANIZATION_ID };
  const res = await call(req);
  const requestCopied = req.accountId === ACCOUNT_ID && req.organizationId === ORGANIZATION_ID;
  const name = tool.name;
  res.tool.name = "changed-by-caller";
  const responseCopied = tool.name === name;
  tool.name = name;
  return { requestCopied, responseCopied };
}

async function main(calls) {
  const levels = (process.env.BENCH_LEVELS ?? "1,16").split(",").map(Number);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const warmup = Number(process.env.BENCH_WARMUP ?? 2000);
  const wanted = (id) => !process.env.BENCH_ROWS || process.env.BENCH_ROWS.split(",").includes(id);
  const grpc = requireKit("@grpc/grpc-js");
  const { createGrpcTransport } = await esm("@connectrpc/connect-node");
  const { createServiceClient, startRpcServer } = await kit("rpc.js");
  const { hostedHere, hostLocally, switchingTransport } = await kit("local-rpc.js");
  const { createLogger } = await kit("logger.js");

  const script = fileURLToPath(import.meta.url);
  const stops = [];
  process.once("SIGINT", async () => {
    await cleanup();
    process.exit(130);
  });
  try {
    // Servers in child processes.
    const connectPort = await freePort();
    const plainPort = await freePort();
    const grpcPort = await freePort();
    const kitPeerPort = await freePort();
    await start("kit-server", [...profiled("kit-server"), script, "serve-kit", String(kitPeerPort)], {
      cwd: kitDir,
      ready: /ready/,
    });
    await start("connect-server", [script, "serve-connect", String(connectPort)], { cwd: kitDir, ready: /ready/ });
    await start("connect-server-plain", [script, "serve-connect", String(plainPort), "plain"], { cwd: kitDir, ready: /ready/ });
    await start("grpc-server", [script, "serve-grpc", String(grpcPort)], { cwd: kitDir, ready: /ready/ });

    // In this process: the implementation, with its own prebuilt tool.
    const tool = resolvedTool();
    const impl = implementation(tool);

    const connectClient = createClient(
      CatalogService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${connectPort}`, defaultTimeoutMs: TIMEOUT_MS }),
    );
    const plainConnectClient = createClient(
      CatalogService,
      createGrpcTransport({ baseUrl: `http://127.0.0.1:${connectPort}`, defaultTimeoutMs: TIMEOUT_MS, acceptCompression: [] }),
    );
    const grpcToConnect = new grpc.Client(`127.0.0.1:${connectPort}`, grpc.credentials.createInsecure());
    const grpcToPlain = new grpc.Client(`127.0.0.1:${plainPort}`, grpc.credentials.createInsecure());
    const grpcToGrpc = new grpc.Client(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure());
    stops.push(
      () => grpcToConnect.close(),
      () => grpcToPlain.close(),
      () => grpcToGrpc.close(),
    );
    const routerClient = createClient(
      CatalogService,
      createRouterTransport((router) => router.service(CatalogService, impl), { transport: { defaultTimeoutMs: TIMEOUT_MS } }),
    );
    const rpcServer = await startRpcServer({
      name: "bench",
      host: "127.0.0.1",
      port: 0,
      log: createLogger("bench", "silent"),
      routes: (router) => router.service(CatalogService, impl),
      serviceNames: [CatalogService.typeName],
    });
    stops.push(() => rpcServer.close(100));
    const kitUrl = `http://127.0.0.1:${rpcServer.port}`;
    const kitClient = createServiceClient(CatalogService, kitUrl);
    const kitPeerUrl = `http://127.0.0.1:${kitPeerPort}`;
    const kitPeerClient = createServiceClient(CatalogService, kitPeerUrl);
    // (5b): hosted on a port nothing listens on, so a call that did not stay in process would fail.
    const bareUrl = "http://127.0.0.1:1";
    stops.push(hostLocally(CatalogService, impl, [], 1));
    const bareClient = createClient(
      CatalogService,
      switchingTransport(createGrpcTransport({ baseUrl: bareUrl, defaultTimeoutMs: TIMEOUT_MS }), bareUrl, [], TIMEOUT_MS),
    );

    const rows = [
      {
        id: "1",
        label: "(1) connect -> connect, other process",
        server: "connect-server",
        call: (r) => connectClient.resolveToolForCall(r),
      },
      {
        id: "1u",
        label: "(1u) connect -> connect, no compression",
        server: "connect-server",
        call: (r) => plainConnectClient.resolveToolForCall(r),
      },
      { id: "2", label: "(2) grpc-js -> connect, other process", server: "connect-server", call: grpcCall(grpcToConnect, grpc) },
      {
        id: "2u",
        label: "(2u) grpc-js -> connect, no compression",
        server: "connect-server-plain",
        call: grpcCall(grpcToPlain, grpc),
      },
      { id: "3", label: "(3) grpc-js -> grpc-js, other process", server: "grpc-server", call: grpcCall(grpcToGrpc, grpc) },
      { id: "4", label: "(4) createRouterTransport, in process", call: (r) => routerClient.resolveToolForCall(r) },
      { id: "5", label: "(5) kit createServiceClient, in process", call: (r) => kitClient.resolveToolForCall(r) },
      { id: "5b", label: "(5b) switchingTransport bare, in process", call: (r) => bareClient.resolveToolForCall(r) },
      { id: "6", label: "(6) direct call, same object (no copy)", call: (r) => impl.resolveToolForCall(r) },
      {
        id: "7",
        label: "(7) kit -> kit, other process",
        server: "kit-server",
        call: (r) => kitPeerClient.resolveToolForCall(r),
      },
    ];
    const byId = Object.fromEntries(rows.map((r) => [r.id, r]));

    const reqBytes = toBinary(
      ResolveToolForCallRequestSchema,
      create(ResolveToolForCallRequestSchema, { toolId: TOOL_ID, accountId: ACCOUNT_ID, organizationId: ORGANIZATION_ID }),
    ).length;
    const resBytes = toBinary(ResolveToolForCallResponseSchema, create(ResolveToolForCallResponseSchema, { tool })).length;
    console.log(
      `rpc-hop: ${CatalogService.typeName}/ResolveToolForCall, request ${reqBytes} B, response ${resBytes} B (input schema ${tool.inputSchemaJson.length} B of JSON)`,
    );
    console.log(
      `node ${process.version}, ${os.availableParallelism()} CPUs, @connectrpc/connect ${version("@connectrpc/connect")}, @grpc/grpc-js ${version("@grpc/grpc-js")}`,
    );
    console.log(
      `(5) is in process: ${hostedHere(CatalogService, kitUrl)}; (5b) is in process: ${hostedHere(CatalogService, bareUrl)}; (7) is in process: ${hostedHere(CatalogService, kitPeerUrl)}`,
    );

    // ---- The guarantee: errors and copies, against (1).
    console.log(
      '\nGuarantee checks (refusal: ConnectError InvalidArgument "refused" + ErrorDetail; isolation: callee mutates its request, caller mutates its response)',
    );
    const reference = await refusal(byId["1"].call);
    for (const r of rows) {
      const got = await refusal(r.call);
      const iso = await isolation(r.call, tool);
      const sameError =
        got.thrown === "ConnectError" &&
        got.code === reference.code &&
        got.rawMessage === reference.rawMessage &&
        got.message === reference.message &&
        sameDetails(got.details, reference.details);
      r.sameError = sameError;
      r.keeps = sameError && iso.requestCopied && iso.responseCopied;
      const error =
        got.thrown === "ConnectError"
          ? `ConnectError ${got.code} "${got.rawMessage}" details [${detailText(got.details)}] cause ${got.cause}`
          : `${got.thrown} code ${got.code} "${got.message}"`;
      const verdict =
        r.id === "1"
          ? "reference"
          : r.id.startsWith("2") || r.id === "3"
            ? "grpc-js client: no ConnectError"
            : r.keeps
              ? "KEEPS the guarantee"
              : "BREAKS the guarantee";
      console.log(`  ${r.label.padEnd(42)} ${error}`);
      console.log(
        `  ${"".padEnd(42)} same error as (1): ${sameError ? "yes" : "no"}; request copied: ${iso.requestCopied ? "yes" : "no"}; response copied: ${iso.responseCopied ? "yes" : "no"} => ${verdict}`,
      );
    }

    // ---- Load.
    const results = {}; // level -> id -> stats
    for (const conc of levels) {
      const loadRows = rows
        .filter((r) => wanted(r.id))
        .map((r) => {
          const expected = TOOL_ID;
          return row(
            r.label,
            async () => {
              const res = await r.call({ toolId: TOOL_ID, accountId: ACCOUNT_ID, organizationId: ORGANIZATION_ID });
              return res.tool?.id === expected;
            },
            { id: r.id, server: r.server },
          );
        });
      await runRounds(loadRows, { calls, conc, rounds, warmup });
      results[conc] = {};
      console.log(
        `\nConcurrency ${conc}: ${Math.ceil(calls / rounds) * rounds} calls per row in ${rounds} alternating rounds, after ${warmup} warm-up calls per row`,
      );
      console.log(
        `  ${"row".padEnd(42)} ${"calls/s".padStart(8)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)}   CPU us/call: ${"client".padStart(7)} ${"server".padStart(7)} ${"total".padStart(7)}`,
      );
      for (const r of loadRows) {
        const s = summary(r.label, r);
        const client = (r.cpu.bench * 1e6) / s.calls;
        const server = r.server ? (r.cpu[r.server] * 1e6) / s.calls : undefined;
        const total = client + (server ?? 0);
        results[conc][r.id] = { ...s, client, server, total };
        console.log(
          `  ${r.label.padEnd(42)} ${s.rps.toFixed(0).padStart(8)} ${s.p50.toFixed(3).padStart(8)} ${s.p99.toFixed(3).padStart(8)}                ${client.toFixed(1).padStart(7)} ${server === undefined ? "      -" : server.toFixed(1).padStart(7)} ${total.toFixed(1).padStart(7)}${s.failures ? `   (${s.failures} failed)` : ""}`,
        );
      }
    }

    if (!rows.every((r) => wanted(r.id))) {
      console.log("\nRatios and verdicts: only when every row runs (BENCH_ROWS left out some)");
      return;
    }

    // ---- Ratios to (1).
    console.log("\nRatios to (1) (x < 1 = cheaper/faster than connect across processes)");
    console.log(`  ${"row".padEnd(42)} ${levels.map((c) => `c=${c}: CPU/call   p50    p99  calls/s`).join("   ")}`);
    for (const r of rows) {
      const cols = levels.map((c) => {
        const a = results[c][r.id];
        const b = results[c]["1"];
        return `${" ".repeat(String(c).length + 3)}${(a.total / b.total).toFixed(2).padStart(8)} ${(a.p50 / b.p50).toFixed(2).padStart(6)} ${(a.p99 / b.p99).toFixed(2).padStart(6)} ${(a.rps / b.rps).toFixed(2).padStart(8)}`;
      });
      console.log(`  ${r.label.padEnd(42)} ${cols.join("   ")}`);
    }

    // ---- Verdicts.
    console.log("\nVerdicts");
    const perLevel = (id, f) => levels.map((c) => `c=${c} ${f(results[c][id], c)}`).join(", ");
    // The in-process decision is between two transports: connect's router transport (4) and the kit's
    // switching transport, compared bare (5b); (5) is the latter as services use it, with the kit's interceptors.
    const candidates = ["4", "5b"].filter((id) => byId[id].keeps);
    const cost = (id) => levels.reduce((t, c) => t + results[c][id].total, 0);
    const tag = (id) => byId[id].label.split(" ")[0];
    const relative = (id, base) => perLevel(id, (x, c) => `${(x.total / results[c][base].total).toFixed(2)}x`);
    if (candidates.length === 0) {
      console.log("  in process: neither (4) nor (5b) keeps the guarantee");
    } else {
      const best = candidates.reduce((a, b) => (cost(b) < cost(a) ? b : a));
      const other = candidates.find((id) => id !== best);
      console.log(
        `  in process: cheapest that keeps the guarantee is ${byId[best].label}, ${perLevel(best, (x) => `${x.total.toFixed(1)} us/call`)}` +
          `${other ? `; ${tag(other)} costs ${relative(other, best)} of it` : ""}` +
          `; (5) with the kit's interceptors ${relative("5", best)}${byId["5"].keeps ? "" : " (BREAKS the guarantee)"}` +
          `; floor (6), no copy${byId["6"].keeps ? "" : ", breaks the guarantee"}: ${perLevel("6", (x) => `${x.total.toFixed(1)} us`)}` +
          `; vs (1) across processes: ${perLevel(best, (x, c) => `${(x.total / results[c]["1"].total).toFixed(2)}x`)}`,
      );
    }
    const cmpTo = (id, base) =>
      levels.map((c) => ({
        c,
        ratio: results[c][id].total / results[c][base].total,
        lat: results[c][id].p50 / results[c][base].p50,
      }));
    const describeTo = (id, base) =>
      cmpTo(id, base)
        .map(({ c, ratio, lat }) => `c=${c} CPU ${ratio.toFixed(2)}x, p50 ${lat.toFixed(2)}x`)
        .join("; ");
    const clearlyTo = (id, base) => {
      const xs = cmpTo(id, base);
      if (xs.every((x) => x.ratio < 1 / 1.2)) return "grpc-js clearly cheaper (> 20% at every concurrency)";
      if (xs.every((x) => x.ratio > 1.2)) return "connect clearly cheaper (> 20% at every concurrency)";
      return "no clear difference (<= 20% at some concurrency)";
    };
    const likeForLike = clearlyTo("3", "1u");
    const decision = likeForLike.startsWith("grpc-js")
      ? "grpc-js is clearly cheaper for the hop"
      : likeForLike.startsWith("connect")
        ? "connect is clearly cheaper: keep connect"
        : "not clear: keep connect";
    console.log(
      `  across processes, like for like (no compression): ${decision}. grpc-js (3) vs connect (1u): ${describeTo("3", "1u")} => ${likeForLike}; ` +
        `grpc-js client alone, (2u) vs (1u): ${describeTo("2u", "1u")} => ${clearlyTo("2u", "1u")}`,
    );
    console.log(
      `  across processes, as configured today: grpc-js (3) vs connect with gzip (1): ${describeTo("3", "1")} => ${clearlyTo("3", "1")}; ` +
        `connect's default gzip alone, (1) vs (1u): ${describeTo("1", "1u")}`,
    );
    console.log(
      `  the kit across processes, (7) vs connect without compression (1u): ${describeTo("7", "1u")}; vs bare grpc-js (3): ${describeTo("7", "3")}`,
    );
  } finally {
    for (const stop of stops.reverse()) {
      try {
        await stop();
      } catch {}
    }
    await cleanup();
  }
}

// ---------------------------------------------------------------------------------------------
// The copy alone: how an in-process call can hand a message across

/**
 * CPU per copy of the representative request and response, each way in alternating rounds: an encode
 * and decode (what the local transport did before issue 36), the kit's schema walk (message-copy.js),
 * protobuf-es `clone`, and `structuredClone`; each result is checked equal to the decoded one.
 */
async function copies(n) {
  const { clone } = await esm("@bufbuild/protobuf");
  const { copyMessage } = await kit("message-copy.js");
  const messages = [
    [
      "request",
      ResolveToolForCallRequestSchema,
      create(ResolveToolForCallRequestSchema, { toolId: TOOL_ID, accountId: ACCOUNT_ID, organizationId: ORGANIZATION_ID }),
    ],
    ["response", ResolveToolForCallResponseSchema, create(ResolveToolForCallResponseSchema, { tool: resolvedTool() })],
  ];
  const ways = {
    "toBinary + fromBinary": (desc, m) => fromBinary(desc, toBinary(desc, m)),
    "kit copyMessage": (desc, m) => copyMessage(desc, m),
    "protobuf-es clone": (desc, m) => clone(desc, m),
    structuredClone: (_desc, m) => structuredClone(m),
  };
  const cpu = {};
  for (const [label, desc, m] of messages) {
    for (const [way, copy] of Object.entries(ways)) {
      if (!equals(desc, copy(desc, m), fromBinary(desc, toBinary(desc, m)))) throw new Error(`${way} changes the ${label}`);
      for (let i = 0; i < 5000; i++) copy(desc, m);
    }
  }
  const rounds = 5;
  for (let round = 0; round < rounds; round++) {
    for (const [label, desc, m] of messages) {
      for (const [way, copy] of Object.entries(ways)) {
        const before = process.cpuUsage();
        for (let i = 0; i < n / rounds; i++) copy(desc, m);
        const used = process.cpuUsage(before);
        const key = `${label}\t${way}`;
        cpu[key] = (cpu[key] ?? 0) + used.user + used.system;
      }
    }
  }
  console.log(`CPU us per copy (${n} copies each, ${rounds} alternating rounds; node ${process.version})`);
  for (const [label] of messages) {
    const base = cpu[`${label}\ttoBinary + fromBinary`];
    for (const way of Object.keys(ways)) {
      const used = cpu[`${label}\t${way}`];
      console.log(`  ${label.padEnd(9)} ${way.padEnd(22)} ${(used / n).toFixed(2).padStart(7)}  ${(used / base).toFixed(2)}x`);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Entry: a server child or the benchmark

const [mode, modeArg, modeOption] = process.argv.slice(2);

if (mode === "copy") {
  await copies(Number(modeArg ?? 50_000));
} else if (mode === "serve-connect") {
  followParent();
  const { connectNodeAdapter } = await esm("@connectrpc/connect-node");
  const impl = implementation(resolvedTool());
  const handler = connectNodeAdapter({
    routes: (router) => router.service(CatalogService, impl),
    ...(modeOption === "plain" ? { acceptCompression: [] } : {}),
  });
  http2.createServer(handler).listen(Number(modeArg), "127.0.0.1", () => process.stdout.write("ready\n"));
} else if (mode === "serve-kit") {
  followParent();
  const { startRpcServer } = await kit("rpc.js");
  const { createLogger } = await kit("logger.js");
  const impl = implementation(resolvedTool());
  await startRpcServer({
    name: "bench-peer",
    host: "127.0.0.1",
    port: Number(modeArg),
    log: createLogger("bench-peer", "silent"),
    routes: (router) => router.service(CatalogService, impl),
    serviceNames: [CatalogService.typeName],
  });
  // Exits (rather than dies) at the bench's SIGTERM, so that a CPU profile (BENCH_PROFILE=kit-server) is written.
  process.once("SIGTERM", () => process.exit(0));
  process.stdout.write("ready\n");
} else if (mode === "serve-grpc") {
  followParent();
  const grpc = requireKit("@grpc/grpc-js");
  const impl = implementation(resolvedTool());
  const server = new grpc.Server();
  server.addService(
    {
      resolveToolForCall: {
        path: METHOD_PATH,
        requestStream: false,
        responseStream: false,
        requestSerialize: serializeRequest,
        requestDeserialize: deserializeRequest,
        responseSerialize: serializeResponse,
        responseDeserialize: deserializeResponse,
      },
    },
    {
      resolveToolForCall(call, callback) {
        impl.resolveToolForCall(call.request).then(
          (res) => callback(null, res),
          (err) => callback({ code: err.code ?? grpc.status.INTERNAL, details: err.rawMessage ?? String(err) }),
        );
      },
    },
  );
  server.bindAsync(`127.0.0.1:${modeArg}`, grpc.ServerCredentials.createInsecure(), (err) => {
    if (err) throw err;
    process.stdout.write("ready\n");
  });
} else {
  await main(Number(mode ?? 20_000));
  // connect-node's HTTP/2 session to the (now gone) connect server may still hold the event loop.
  process.exit(0);
}
