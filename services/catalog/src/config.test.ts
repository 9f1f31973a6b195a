import { ConfigError, loadConfig } from "@toolport/kit/config";
import { describe, expect, it } from "vitest";
import { catalogEnv } from "./config.js";

describe("CATALOG_OUTBOUND_ALLOW", () => {
  it("defaults to nothing allowed and takes the execution service's syntax", () => {
    expect(loadConfig(catalogEnv, {}).CATALOG_OUTBOUND_ALLOW).toBe("");
    const allow = "127.0.0.1:8081, 10.1.0.0/16,[::1]:9000 api.internal";
    expect(loadConfig(catalogEnv, { CATALOG_OUTBOUND_ALLOW: allow }).CATALOG_OUTBOUND_ALLOW).toBe(allow);
  });

  it("stops the start on a malformed entry, naming the variable and the entry", () => {
    expect(() => loadConfig(catalogEnv, { CATALOG_OUTBOUND_ALLOW: "127.0.0.1:8081,10.0.0.0/99" })).toThrow(ConfigError);
    expect(() => loadConfig(catalogEnv, { CATALOG_OUTBOUND_ALLOW: "10.0.0.0/99" })).toThrow(
      /CATALOG_OUTBOUND_ALLOW: CATALOG_OUTBOUND_ALLOW entry 10\.0\.0\.0\/99: not a CIDR range/,
    );
    expect(() => loadConfig(catalogEnv, { CATALOG_OUTBOUND_ALLOW: "api:notaport" })).toThrow(/entry api:notaport: bad port/);
  });
});
