import { describe, expect, it } from "vitest";
import { askUpstream, callerElement, type Element, upstreamAnswers, upstreamAsk } from "./consent.js";

const question = (key: string, message: string) => ({
  key,
  message,
  requested_schema: { type: "object", properties: { confirm: { type: "boolean" } } },
});

/** An element whose upstream MCP tool asked, as runBatch gives it. */
const asking: Element = {
  tool_id: "tool-1",
  success: false,
  result: null,
  error: 'the MCP tool needs a person\'s input before it can finish (it asks: "Book?"): ask the person ...',
  error_code: "mcp_input_required",
  error_details: {
    tool_id: "tool-1",
    questions: [question("confirm", "Book?"), question("seats", "How many?")],
    continuation: "ic1.a.b",
  },
  _meta: { execution_id: "e-1" },
};

describe("an upstream tool's questions", () => {
  it("are found only on an mcp_input_required element that carries them", () => {
    expect(upstreamAsk(asking)).toEqual({
      continuation: "ic1.a.b",
      questions: [question("confirm", "Book?"), question("seats", "How many?")],
    });
    expect(upstreamAsk({ ...asking, error_code: "http_500" })).toBeUndefined();
    expect(upstreamAsk({ ...asking, error_details: { continuation: "c", questions: [] } })).toBeUndefined();
  });

  it("are asked one by one with any asking function, and the answers become input_responses", async () => {
    const asked: string[] = [];
    const responses = await askUpstream("tool-1", upstreamAsk(asking)!, async (request) => {
      asked.push(request.message);
      expect(request.mode).toBe("form");
      return { action: "accept", content: { confirm: true } };
    });
    expect(asked).toHaveLength(2);
    expect(asked[0]).toMatch(/\(tool-1\) asks:\nBook\?$/);
    expect(responses).toEqual({
      continuation: "ic1.a.b",
      answers: {
        confirm: { action: "accept", content: { confirm: true } },
        seats: { action: "accept", content: { confirm: true } },
      },
    });
  });

  it("stop at a person's decline: the rest is not asked", async () => {
    let asked = 0;
    const responses = await askUpstream("tool-1", upstreamAsk(asking)!, async () => {
      asked++;
      return { action: "decline" };
    });
    expect(asked).toBe(1);
    expect(responses.answers).toEqual({ confirm: { action: "decline" } });
  });

  it("come back from a retried round under their upstream_<index>_<key> keys", () => {
    const extra = {
      mcpReq: {
        inputResponses: {
          upstream_2_confirm: { action: "accept", content: { confirm: true } },
          upstream_2_seats: { action: "cancel" },
          upstream_3_confirm: { action: "accept", content: { confirm: false } },
        },
      },
    };
    expect(upstreamAnswers(extra, { index: 2, continuation: "c", keys: ["confirm", "seats"] })).toEqual({
      continuation: "c",
      answers: { confirm: { action: "accept", content: { confirm: true } }, seats: { action: "cancel" } },
    });
  });

  it("never reach the caller with the continuation; a caller that cannot ask is told the tool needs a person", () => {
    const shown = callerElement(asking);
    expect("error_details" in shown).toBe(false);
    expect(shown.error).toMatch(/^the MCP tool needs a person's input before it can finish \(it asks: "Book\?"\)/);
    expect(shown.error).toMatch(/cannot ask its user/);
    const plain = { tool_id: "t", success: true, result: 1, error: null };
    expect(callerElement(plain)).toBe(plain);
  });
});
