/**
 * A service's handlers called through connect's in-memory router transport: no network, but the real
 * serialization and the kit's server interceptor (caller from the principal metadata, domain errors as
 * ConnectErrors with their ErrorDetail), as the gateway's calls reach them.
 */
import type { DescService } from "@bufbuild/protobuf";
import {
  type Client,
  ConnectError,
  type ConnectRouter,
  createClient,
  createRouterTransport,
  type ServiceImpl,
} from "@connectrpc/connect";
import { currentScope } from "@toolport/kit/context";
import { createLogger } from "@toolport/kit/logger";
import { principalHeader, serverInterceptor } from "@toolport/kit/rpc";
import { ErrorDetailSchema } from "@toolport/proto/toolport/common/v1/errors_pb";
import type { Principal } from "@toolport/proto/toolport/common/v1/principal_pb";

/**
 * A client of `impl` for each caller: `as(principal)` sends the principal as the gateway does; `anonymous`
 * sends none. `impl` is the service's handlers, or its routes (a service's `routes.ts` on its parts), which
 * must register `service`.
 */
export function inMemoryService<S extends DescService>(
  service: S,
  impl: ServiceImpl<S> | ((router: ConnectRouter) => void),
  role = "test",
): { as(principal: Principal): Client<S>; anonymous: Client<S> } {
  const log = createLogger(role, process.env.TEST_LOG ?? "silent");
  const client = (principal?: Principal) =>
    createClient(
      service,
      createRouterTransport(typeof impl === "function" ? impl : (router) => router.service(service, impl), {
        router: { interceptors: [serverInterceptor(role, log)] },
        transport: {
          interceptors: principal
            ? [
                (next) => (req) => {
                  for (const [name, value] of Object.entries(principalHeader(principal))) req.header.set(name, value);
                  return next(req);
                },
              ]
            : [],
        },
      }),
    );
  return { as: client, anonymous: client() };
}

/**
 * A client of another service's fake, served in process as the service under test's clients reach the real
 * one: the caller's principal (the current scope's) travels in the metadata and the kit's server interceptor
 * reads it, so the fake sees who is calling.
 */
export function inMemoryPeer<S extends DescService>(service: S, impl: Partial<ServiceImpl<S>>, role: string): Client<S> {
  const log = createLogger(role, process.env.TEST_LOG ?? "silent");
  return createClient(
    service,
    createRouterTransport((router) => router.service(service, impl), {
      router: { interceptors: [serverInterceptor(role, log)] },
      transport: {
        interceptors: [
          (next) => (req) => {
            const principal = currentScope()?.principal;
            if (principal) for (const [name, value] of Object.entries(principalHeader(principal))) req.header.set(name, value);
            return next(req);
          },
        ],
      },
    }),
  );
}

/** The code and reason (ErrorDetail) an RPC failed with; throws when it did not fail. */
export async function refusal(call: Promise<unknown>): Promise<{ code: number; reason: string | undefined; message: string }> {
  try {
    await call;
  } catch (err) {
    const e = ConnectError.from(err);
    return { code: e.code, reason: e.findDetails(ErrorDetailSchema)[0]?.reason, message: e.rawMessage };
  }
  throw new Error("the call succeeded; a refusal was expected");
}
