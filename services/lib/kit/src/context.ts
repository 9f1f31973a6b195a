/**
 * Per-request values that must follow a request across awaits: the request id (for logs, outgoing
 * gRPC metadata and events), the caller's principal and when the answer is due. Handlers read them through connect's
 * context values; code far from the handler (loggers, clients, the outbox) reads them from here.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { Principal } from "@toolport/proto/toolport/common/v1/principal_pb";

export interface RequestScope {
  requestId: string;
  principal?: Principal;
  /**
   * When the request's answer is due (epoch ms), if its receiver set one (the gateway: RPC_TIMEOUT_MS
   * after a request arrives). A call to a service that sets no deadline of its own ends by then, so the
   * time the request spent before the call comes out of the call's deadline (rpc.ts).
   */
  deadline?: number;
}

const storage = new AsyncLocalStorage<RequestScope>();

export function runInScope<T>(scope: RequestScope, fn: () => T): T {
  return storage.run(scope, fn);
}

export function currentScope(): RequestScope | undefined {
  return storage.getStore();
}

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/** Request ids we accept from a caller: short, printable, no separators that could forge log lines. */
export function acceptRequestId(value: string | null | undefined): string {
  if (value && /^[A-Za-z0-9._:-]{1,128}$/.test(value)) return value;
  return randomUUID();
}

/** Metadata keys carried on gRPC calls between our processes. */
export const REQUEST_ID_HEADER = "x-request-id";
export const PRINCIPAL_HEADER = "toolport-principal-bin";
