/** The request readers every route shares: what they read, and the 400 each wording gives. */
import { describe, expect, it } from "vitest";
import { HttpError } from "./errors.js";
import {
  badParameter,
  bigintField,
  boolQuery,
  intQuery,
  limitQuery,
  linkNext,
  namedField,
  objectBody,
  queryList,
  stringField,
  timeValue,
} from "./input.js";

function refusal(fn: () => unknown): { status: number; code: string; message: string; details: unknown } {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    return { status: err.status, code: err.code, message: err.message, details: err.details };
  }
  throw new Error("expected a 400");
}

describe("field readers", () => {
  it("read absent and null as undefined and a value of the right type as itself", () => {
    expect(stringField({ a: "x", b: null }, "a")).toBe("x");
    expect(stringField({ b: null }, "b")).toBeUndefined();
    expect(bigintField({ n: "90071992547409930" }, "n")).toBe(90071992547409930n);
    expect(bigintField({}, "n")).toBeNull();
  });

  it("word a bad field three ways, each naming it with its path", () => {
    expect(refusal(() => stringField({ name: 1 }, "name", "contact."))).toEqual({
      status: 400,
      code: "invalid_request",
      message: "contact.name: must be a string",
      details: { field: "contact.name" },
    });
    expect(refusal(() => stringField({ name: 1 }, "name", "contact.", namedField))).toEqual({
      status: 400,
      code: "invalid_request",
      message: "contact.name must be a string",
      details: { field: "contact.name" },
    });
    expect(refusal(() => stringField({ confirm_token: 1 }, "confirm_token", "calls[0].", badParameter))).toEqual({
      status: 400,
      code: "invalid_parameters",
      message: "calls[0].confirm_token must be a string",
      details: {
        field: "calls[0].confirm_token",
        fields: [{ field: "calls[0].confirm_token", message: "calls[0].confirm_token must be a string" }],
      },
    });
  });

  it("refuse a body that is not an object", () => {
    expect(refusal(() => objectBody({ request: { body: [1] } })).code).toBe("invalid_body");
    expect(objectBody({ request: {} })).toEqual({});
  });
});

describe("query readers", () => {
  it("read an integer leniently (first value, padded, empty is absent) or exactly as sent", () => {
    expect(intQuery(["5", "6"], "limit")).toBe(5);
    expect(intQuery(" 7 ", "limit")).toBe(7);
    expect(intQuery("", "limit")).toBeUndefined();
    expect(intQuery("12", "limit", { exact: true })).toBe(12);
    expect(refusal(() => intQuery("", "limit", { fail: namedField, exact: true })).message).toBe("limit must be an integer");
    expect(refusal(() => intQuery(["5", "6"], "limit", { exact: true })).message).toBe("limit: must be an integer");
    expect(refusal(() => intQuery("ten", "limit")).message).toBe("limit: must be an integer");
  });

  it("read booleans, lists, limits and times", () => {
    expect(boolQuery("1", "ready_only")).toBe(true);
    expect(boolQuery(undefined, "ready_only")).toBe(false);
    expect(refusal(() => boolQuery("yes", "ready_only", namedField)).message).toBe("ready_only must be true or false");
    expect(queryList({ query: { "tags[]": ["a, b", " ", "c"] } }, "tags")).toEqual(["a", "b", "c"]);
    expect(limitQuery({ query: { limit: "5000000" } })).toBe(1_000_000);
    expect(refusal(() => limitQuery({ query: { limit: "-1" } })).code).toBe("invalid_limit");
    expect(timeValue("2026-01-02T03:04:05Z", "since")?.seconds).toBe(BigInt(Date.UTC(2026, 0, 2, 3, 4, 5) / 1000));
    expect(refusal(() => timeValue("yesterday", "since")).message).toBe("since: must be an ISO 8601 timestamp");
  });

  it("link the next page with the same query and the next cursor, and no link on the last page", () => {
    const headers = new Map<string, string>();
    const ctx = {
      query: { limit: "2", cursor: "old", tags: ["a", "b"] },
      path: "/v1/tools",
      set: (n: string, v: string) => headers.set(n, v),
    };
    linkNext(ctx, "https://toolport.example/", undefined);
    expect(headers.size).toBe(0);
    linkNext(ctx, "https://toolport.example/", "next");
    expect(headers.get("Link")).toBe('<https://toolport.example/v1/tools?limit=2&tags=a&tags=b&cursor=next>; rel="next"');
  });
});
