import { describe, expect, it } from "vitest";
import { checkSlug, slugify, slugSuffixPrefixes, uniqueSlug } from "./slug.js";

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

  it("name every prefix a suffixed form starts with, the shortened ones of a long base too", () => {
    expect(slugSuffixPrefixes("pets")).toEqual(["pets-"]);
    const long = slugify(`${"ab".repeat(32)}c listssloptions`);
    expect(long.length).toBe(80);
    const taken = new Set([long]);
    for (let n = 2; n <= 12; n++) {
      const next = uniqueSlug(long, (s) => taken.has(s));
      expect(next.length).toBeLessThanOrEqual(80);
      expect(slugSuffixPrefixes(long).some((prefix) => next.startsWith(prefix))).toBe(true);
      taken.add(next);
    }
  });

  it("refuse chosen slugs that are not lowercase words joined by hyphens", () => {
    expect(checkSlug("my-service-2", "slug")).toBe("my-service-2");
    expect(() => checkSlug("My Service", "slug")).toThrow(/slug/);
    expect(() => checkSlug("a--b", "slug")).toThrow();
  });
});
