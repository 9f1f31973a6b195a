import { describe, expect, it } from "vitest";
import { unwrapMcpEnvelope } from "./envelope.js";

describe("an MCP tool result's payload", () => {
  it("is the structured content when there is one, even beside text that holds other JSON", () => {
    const structured = { temperature: 21, unit: "C" };
    expect(
      unwrapMcpEnvelope({ content: [{ type: "text", text: '{"temperature": "21 C"}' }], structuredContent: structured }),
    ).toEqual(structured);
    expect(unwrapMcpEnvelope({ content: [{ type: "text", text: "Sunny, 21 C" }], structuredContent: structured })).toEqual(
      structured,
    );
  });

  it("is the text's JSON, else the text, else the envelope, without structured content", () => {
    expect(unwrapMcpEnvelope({ content: [{ type: "text", text: '{"a": 1}' }] })).toEqual({ a: 1 });
    expect(unwrapMcpEnvelope({ content: [{ type: "text", text: "plain" }], structuredContent: null })).toBe("plain");
    const image = { content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] };
    expect(unwrapMcpEnvelope(image)).toEqual(image);
  });
});
