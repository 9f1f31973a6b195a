import { describe, expect, it } from "vitest";
import { BuiltinInputError, findBuiltin } from "./index.js";

const ctx = { now: () => new Date("2024-05-01T12:00:00Z") };
// biome-ignore lint/suspicious/noExplicitAny: results are checked field by field
const call = async (handler: string, input: Record<string, unknown>): Promise<any> => findBuiltin(handler)!.run(input, ctx);

describe("sample.list_products", () => {
  it("returns the first page of 20 with a cursor, and the same rows every time", async () => {
    const first = await call("sample.list_products", {});
    expect(first.products).toHaveLength(20);
    expect(first.total).toBe(200);
    expect(first.next_cursor).toEqual(expect.any(String));
    expect(first.products[0]).toEqual({
      id: "prod_0001",
      name: "Portable Notebook",
      category: "books",
      description: "A portable notebook from the sample store's books range. Sample data, not a real product.",
      price_cents: 29060,
      currency: "USD",
      in_stock: true,
      stock_quantity: 246,
      rating: 3.2,
      created_at: "2024-08-11T16:28:06Z",
    });
    expect(await call("sample.list_products", {})).toEqual(first);
  });

  it("pages through all 200 products exactly once", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await call("sample.list_products", { limit: 60, ...(cursor ? { cursor } : {}) });
      seen.push(...page.products.map((p: { id: string }) => p.id));
      cursor = page.next_cursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(4);
    expect(new Set(seen).size).toBe(200);
    expect(seen[199]).toBe("prod_0200");
  });

  it("filters by category and stock", async () => {
    const kitchen = await call("sample.list_products", { category: "kitchen", limit: 100 });
    expect(kitchen.total).toBe(28); // every 7th product, starting with the 5th
    expect(kitchen.next_cursor).toBeNull();
    expect(kitchen.products.every((p: { category: string }) => p.category === "kitchen")).toBe(true);
    const soldOut = await call("sample.list_products", { in_stock: false, limit: 100 });
    expect(soldOut.total).toBeGreaterThan(0);
    expect(
      soldOut.products.every((p: { in_stock: boolean; stock_quantity: number }) => !p.in_stock && p.stock_quantity === 0),
    ).toBe(true);
  });

  it("refuses a forged cursor, a limit over 100 and an unknown category", async () => {
    await expect(call("sample.list_products", { cursor: "not-a-cursor" })).rejects.toThrow(BuiltinInputError);
    await expect(call("sample.list_products", { cursor: Buffer.from("o:x").toString("base64url") })).rejects.toThrow(
      /pass next_cursor back unchanged/,
    );
    await expect(call("sample.list_products", { limit: 101 })).rejects.toThrow("limit: must be <= 100");
    await expect(call("sample.list_products", { category: "cars" })).rejects.toThrow(
      /category: must be one of books, electronics/,
    );
  });

  it("gives an empty last page for a cursor past the end", async () => {
    const page = await call("sample.list_products", { cursor: Buffer.from("o:500").toString("base64url") });
    expect(page).toEqual({ products: [], total: 200, next_cursor: null });
  });

  it("returns copies: changing a result does not change the store", async () => {
    const page = await call("sample.list_products", { limit: 1 });
    page.products[0].name = "changed";
    expect((await call("sample.get_product", { product_id: "prod_0001" })).name).toBe("Portable Notebook");
  });
});

describe("sample.get_product", () => {
  it("returns the product that the listing shows", async () => {
    const listed = await call("sample.list_products", { limit: 100 });
    expect(await call("sample.get_product", { product_id: "prod_0042" })).toEqual(listed.products[41]);
  });

  it("says which ids exist when the id is unknown", async () => {
    await expect(call("sample.get_product", { product_id: "prod_9999" })).rejects.toThrow(
      new BuiltinInputError('product_id: no product "prod_9999"; ids run from prod_0001 to prod_0200 (see list_products)'),
    );
  });
});

describe("sample.list_orders and sample.get_customer", () => {
  it("lists 500 orders oldest first, with totals that add up", async () => {
    const page = await call("sample.list_orders", { limit: 100 });
    expect(page.total).toBe(500);
    expect(page.orders[0].id).toBe("ord_00001");
    const dates = page.orders.map((o: { created_at: string }) => o.created_at);
    expect([...dates].sort()).toEqual(dates);
    for (const order of page.orders) {
      const sum = order.items.reduce(
        (s: number, i: { quantity: number; unit_price_cents: number }) => s + i.quantity * i.unit_price_cents,
        0,
      );
      expect(order.total_cents).toBe(sum);
      expect(Number.isInteger(order.total_cents)).toBe(true);
    }
  });

  it("filters by customer and status together, across pages", async () => {
    const all = await call("sample.list_orders", { customer_id: "cust_0001", limit: 100 });
    expect(all.total).toBe(9);
    expect(all.orders.every((o: { customer_id: string }) => o.customer_id === "cust_0001")).toBe(true);
    const firstPage = await call("sample.list_orders", { customer_id: "cust_0001", limit: 5 });
    const secondPage = await call("sample.list_orders", { customer_id: "cust_0001", limit: 5, cursor: firstPage.next_cursor });
    expect([...firstPage.orders, ...secondPage.orders]).toEqual(all.orders);
    expect(secondPage.next_cursor).toBeNull();
    const shipped = await call("sample.list_orders", { status: "shipped", limit: 100 });
    expect(shipped.orders.every((o: { status: string }) => o.status === "shipped")).toBe(true);
  });

  it("summarizes a customer's orders, cancelled ones not counted as spent", async () => {
    const customer = await call("sample.get_customer", { customer_id: "cust_0001" });
    expect(customer).toEqual({
      id: "cust_0001",
      name: "Lena Evans",
      email: "lena.evans1@example.com",
      city: "Berlin",
      country: "DE",
      loyalty_tier: "bronze",
      created_at: "2024-06-06T13:14:38Z",
      order_count: 9,
      total_spent_cents: 651206,
    });
    const orders = (await call("sample.list_orders", { customer_id: "cust_0001", limit: 100 })).orders;
    const spent = orders
      .filter((o: { status: string }) => o.status !== "cancelled")
      .reduce((s: number, o: { total_cents: number }) => s + o.total_cents, 0);
    expect(customer.total_spent_cents).toBe(spent);
  });

  it("refuses an unknown customer", async () => {
    await expect(call("sample.get_customer", { customer_id: "cust_0101" })).rejects.toThrow(
      /ids run from cust_0001 to cust_0100/,
    );
  });
});

describe("sample.get_weather", () => {
  it("is labelled sample data and depends only on the city name", async () => {
    const a = await call("sample.get_weather", { city: "Lisbon", days: 1 });
    expect(a).toEqual({
      city: "Lisbon",
      sample_data: true,
      notice: "Sample data generated from the city name; not a real observation or forecast.",
      units: "metric",
      current: { temperature: -4, feels_like: -5, condition: "sunny", humidity_pct: 93, wind_speed: 18 },
      forecast: [{ day: 1, high: 6, low: 0, condition: "cloudy", precipitation_chance_pct: 60 }],
    });
    const b = await call("sample.get_weather", { city: "  lisbon ", days: 1 });
    expect(b.current).toEqual(a.current);
    expect((await call("sample.get_weather", { city: "Osaka" })).current).not.toEqual(a.current);
  });

  it("gives the forecast days asked for, in imperial units when asked", async () => {
    const weather = await call("sample.get_weather", { city: "Lisbon", days: 7, units: "imperial" });
    expect(weather.forecast.map((d: { day: number }) => d.day)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(weather.units).toBe("imperial");
    const metric = await call("sample.get_weather", { city: "Lisbon", days: 7 });
    // The same draws, converted before rounding: within rounding of 6 °C -> 42.8 °F.
    expect(Math.abs(weather.forecast[0].high - (metric.forecast[0].high * 9) / 5 - 32)).toBeLessThanOrEqual(1.4);
    expect(weather.forecast.map((d: { condition: string }) => d.condition)).toEqual(
      metric.forecast.map((d: { condition: string }) => d.condition),
    );
    await expect(call("sample.get_weather", { city: "Lisbon", days: 8 })).rejects.toThrow("days: must be <= 7");
    await expect(call("sample.get_weather", { city: "   " })).rejects.toThrow(/city: must name a city/);
  });
});

describe("sample.search_books", () => {
  it("finds an author's books, ties broken by title", async () => {
    const result = await call("sample.search_books", { query: "Dickens" });
    expect(result.total).toBe(3);
    expect(result.books.map((b: { title: string }) => b.title)).toEqual([
      "A Tale of Two Cities",
      "Great Expectations",
      "Oliver Twist",
    ]);
  });

  it("ranks title matches above subject matches and honours the limit", async () => {
    const result = await call("sample.search_books", { query: "war", limit: 2 });
    // War and Peace: title (3) + subject (1); The Art of War and The War of the Worlds: title only.
    expect(result.books.map((b: { title: string; score: number }) => [b.title, b.score])).toEqual([
      ["War and Peace", 4],
      ["The Art of War", 3],
    ]);
    expect(result.total).toBe(3);
  });

  it("returns no books for words nowhere in the library, and refuses a query with no words", async () => {
    expect(await call("sample.search_books", { query: "quantum chromodynamics" })).toEqual({
      query: "quantum chromodynamics",
      total: 0,
      books: [],
    });
    await expect(call("sample.search_books", { query: "!!!" })).rejects.toThrow(/query: needs at least one letter or digit/);
  });
});
