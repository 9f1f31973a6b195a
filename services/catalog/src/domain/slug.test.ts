import { describe, expect, it } from "vitest";
import { checkSlug, slugify, uniqueSlug } from "./slug.js";

describe("slugs", () => {
  it("are readable: words from names, camelCase split, an acronym ending a word kept whole", () => {
    expect(slugify("findPetsByStatus")).toBe("find-pets-by-status");
    expect(slugify("Swagger Petstore - OpenAPI 3.0")).toBe("swagger-petstore-openapi-3-0");
    expect(slugify("HTTPResponseCode")).toBe("http-response-code");
    expect(slugify("Crème brûlée!")).toBe("creme-brulee");
    expect(slugify("!!!")).toBe("item");
  });

  it("are made unique with a numeric suffix", () => {
    const taken = new Set(["pets", "pets-2"]);
    expect(uniqueSlug("pets", (s) => taken.has(s))).toBe("pets-3");
    expect(uniqueSlug("cats", (s) => taken.has(s))).toBe("cats");
  });

  it("refuse chosen slugs that are not lowercase words joined by hyphens", () => {
    expect(checkSlug("my-service-2", "slug")).toBe("my-service-2");
    expect(() => checkSlug("My Service", "slug")).toThrow(/slug/);
    expect(() => checkSlug("a--b", "slug")).toThrow();
  });
});
