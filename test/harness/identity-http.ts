/** A small HTTP client for identity's gateway routes, shared by identity's integration tests. */
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { Call, Reply, RequestOptions } from "./http.js";

export type { Call, Reply } from "./http.js";
export { gatewayClient } from "./http.js";

export type Credentials = Pick<RequestOptions, "key" | "token" | "headers">;

export interface Human {
  email: string;
  password: string;
  token: string;
  accountId: string;
  organizationId: string;
}

export async function signupHuman(call: Call, name = "person"): Promise<Human> {
  const email = `${name}-${randomUUID().slice(0, 8)}@example.com`;
  const password = "correct horse battery staple";
  const res = await call("POST", "/auth/signup", { body: { email, password, name } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return {
    email,
    password,
    token: res.body.access_token,
    accountId: res.body.account_id,
    organizationId: res.body.organization_id,
  };
}

export async function createKey(call: Call, auth: Credentials, body: Record<string, unknown> = { name: "test key" }) {
  const res = await call("POST", "/api-keys", { ...auth, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; key: string; key_prefix: string; organization_id: string };
}

/** The dual error body of DESIGN.md with the given code. */
export function expectError(res: Reply, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body).toMatchObject({
    detail: expect.anything(),
    error: { code, message: expect.any(String), details: expect.any(Object) },
  });
}

/** A 400 naming the field. */
export function expectBadField(res: Reply, field: string) {
  expectError(res, 400, "invalid_request");
  expect(res.body.error.details.field).toBe(field);
  expect(res.body.error.message).toContain(field);
}
