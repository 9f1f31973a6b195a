import { describe, expect, it } from "vitest";
import { rateLimitRequest } from "./counters.js";

const defaults = { registration: { limit: 5, windowSeconds: 60 } };

describe("rate-limit requests", () => {
  it("take a known bucket's defaults when limit or window is 0, and keep explicit values", () => {
    expect(
      rateLimitRequest(defaults, { bucket: "registration", subjectKey: "1.2.3.4", limit: 0, windowSeconds: 0, cost: undefined }),
    ).toEqual({
      bucket: "registration",
      subjectKey: "1.2.3.4",
      limit: 5,
      windowSeconds: 60,
      cost: 1,
    });
    expect(
      rateLimitRequest(defaults, { bucket: "registration", subjectKey: "k", limit: 9, windowSeconds: 10, cost: 2 }),
    ).toMatchObject({
      limit: 9,
      windowSeconds: 10,
      cost: 2,
    });
  });

  it("refuse what cannot be counted, naming the field", () => {
    const bad = (input: Partial<Parameters<typeof rateLimitRequest>[1]>) => {
      try {
        rateLimitRequest(defaults, { bucket: "b", subjectKey: "k", limit: 1, windowSeconds: 1, cost: undefined, ...input });
      } catch (err) {
        return (err as { details: { field: string } }).details.field;
      }
      return undefined;
    };
    expect(bad({ bucket: "" })).toBe("bucket");
    expect(bad({ subjectKey: "" })).toBe("subject_key");
    expect(bad({ bucket: "unknown", limit: 0 })).toBe("limit");
    expect(bad({ windowSeconds: 0 })).toBe("window_seconds");
    expect(bad({ cost: 2 })).toBe("cost");
  });
});
