// The floor of the layout DESIGN.md fixes for a tool call, for the execution benchmark's row (d): an HTTP
// request into Koa, ONE connect gRPC hop to a service, that service's HTTP call to the upstream (undici)
// and ONE durable Postgres INSERT of the result, then the answer back. Nothing else: no authentication,
// no tool lookup, no validation, no rate limit, no redaction, no event. Whatever Toolport's gateway
// does costs at least this much, so (d)/(b) bounds what (c)/(b) can reach on the machine it runs on.
// Run by execution-gateway.mjs as two processes:
//   node test/bench/execution-floor.mjs service PORT UPSTREAM_URL DATABASE_URL
//   node test/bench/execution-floor.mjs gateway PORT SERVICE_URL
// and, for row (d1), the floor of the one-process layout: Koa, the upstream call and the INSERT in ONE
// process, no hop:
//   node test/bench/execution-floor.mjs one PORT UPSTREAM_URL DATABASE_URL
import { randomUUID } from "node:crypto";
import http2 from "node:http2";
import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { ExecutionService } from "@toolport/proto/toolport/execution/v1/execution_service_pb";
import Koa from "koa";
import pg from "pg";
import { Agent, request } from "undici";

const [role, port, target, databaseUrl] = process.argv.slice(2);
// An exit on SIGTERM (the bench's stop), so that a --cpu-prof profile (BENCH_PROFILE=floor-one...) is written.
process.once("SIGTERM", () => process.exit(0));

/** The work of a call: the upstream's answer, stored with one INSERT. */
async function floorWork() {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  await pool.query("CREATE TABLE IF NOT EXISTS floor_results (id uuid PRIMARY KEY, result jsonb NOT NULL)");
  const dispatcher = new Agent({ connections: 64 });
  return async () => {
    const res = await request(`${target}/small`, { dispatcher });
    const value = await res.body.json();
    const id = randomUUID();
    await pool.query({
      name: "floor_insert",
      text: "INSERT INTO floor_results (id, result) VALUES ($1, $2)",
      values: [id, value],
    });
    return { id, value };
  };
}

async function readJson(ctx) {
  const chunks = [];
  for await (const chunk of ctx.req) chunks.push(chunk);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
}

if (role === "one") {
  const work = await floorWork();
  const app = new Koa();
  app.use(async (ctx) => {
    await readJson(ctx);
    const { id, value } = await work();
    ctx.body = { tool_id: ctx.path.split("/").pop(), success: true, result: value, execution_id: id };
  });
  app.listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\n"));
} else if (role === "service") {
  const work = await floorWork();
  const handler = connectNodeAdapter({
    routes(router) {
      router.service(ExecutionService, {
        async callTool(req) {
          const { id, value } = await work();
          return { result: { toolId: req.toolId, success: true, executionId: id, result: fromJson(ValueSchema, value) } };
        },
      });
    },
  });
  http2.createServer(handler).listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\n"));
} else if (role === "gateway") {
  const client = createClient(ExecutionService, createGrpcTransport({ baseUrl: target, defaultTimeoutMs: 10_000 }));
  const app = new Koa();
  app.use(async (ctx) => {
    const body = await readJson(ctx);
    const { result } = await client.callTool({ toolId: ctx.path.split("/").pop(), toolInput: body });
    ctx.body = { tool_id: result.toolId, success: result.success, result: result.result, execution_id: result.executionId };
  });
  app.listen(Number(port), "127.0.0.1", () => process.stdout.write("ready\n"));
} else {
  process.stderr.write("usage: execution-floor.mjs one|service|gateway ...\n");
  process.exit(2);
}
