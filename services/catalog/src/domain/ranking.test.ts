import { describe, expect, it } from "vitest";
import type { Readiness, ServiceRecord, ToolRecord } from "./model.js";
import { queryNamesService, rankResults } from "./ranking.js";

const service = (name: string, isDemo: boolean) =>
  ({ id: name, name, slug: name.toLowerCase().replace(/ /g, "-"), isDemo }) as ServiceRecord;
const tool = (name: string, slug = name) => ({ id: name, name, slug }) as ToolRecord;
const cand = (t: string, s: ServiceRecord, readiness: Readiness = "ready") => ({ tool: tool(t), service: s, readiness });

describe("search ordering", () => {
  const real = service("Twilio", false);
  const demo = service("Sample Store", true);

  it("puts an exact name or slug match first", () => {
    const ranked = rankResults("send_sms", [cand("send_sms_bulk", real), cand("send_sms", real)], false);
    expect(ranked.map((c) => c.tool.name)).toEqual(["send_sms", "send_sms_bulk"]);
  });

  it("puts demo services behind real ones unless the query names them", () => {
    const list = [cand("list_orders", demo), cand("orders_export", real)];
    expect(rankResults("orders", list, false).map((c) => c.tool.name)).toEqual(["orders_export", "list_orders"]);
    expect(rankResults("sample store orders", list, false).map((c) => c.tool.name)).toEqual(["list_orders", "orders_export"]);
  });

  it("puts ready tools first for signed-in callers only, and behind the demo rule", () => {
    const list = [cand("a", real, "needs_credential"), cand("b", real, "ready"), cand("c", demo, "ready")];
    expect(rankResults("x", list, true).map((c) => c.tool.name)).toEqual(["b", "a", "c"]);
    expect(rankResults("x", list, false).map((c) => c.tool.name)).toEqual(["a", "b", "c"]);
  });

  it("matches service names on word boundaries", () => {
    expect(queryNamesService("sample store customers", demo)).toBe(true);
    expect(queryNamesService("samples storefront", demo)).toBe(false);
  });
});
