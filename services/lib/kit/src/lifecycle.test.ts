import { describe, expect, it } from "vitest";
import { tuneHeapGrowth } from "./lifecycle.js";

describe("tuneHeapGrowth", () => {
  it("accepts a whole percentage from 0 to 1000, and the default when unset or blank", () => {
    for (const value of [undefined, "", " ", "0", "1000", "100"])
      expect(() => tuneHeapGrowth({ HEAP_GROWING_PERCENT: value })).not.toThrow();
  });

  it("refuses anything else with a ConfigError naming the variable and the value", () => {
    for (const value of ["-1", "1001", "1.5", "lots", "50%"]) {
      let error: Error | undefined;
      try {
        tuneHeapGrowth({ HEAP_GROWING_PERCENT: value });
      } catch (err) {
        error = err as Error;
      }
      expect(error?.name).toBe("ConfigError");
      expect(error?.message).toContain("HEAP_GROWING_PERCENT");
      expect(error?.message).toContain(JSON.stringify(value));
    }
  });
});
