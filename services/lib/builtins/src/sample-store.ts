/**
 * The Sample Store: a demo service (`is_demo: true`) over deterministic fake data, so a new agent's first call
 * succeeds with no credential and no network. Every answer is sample data and says so where it could be
 * mistaken for the real thing (weather).
 */
import { defineTool, objectSchema } from "./define.js";
import { paginate } from "./lib/pagination.js";
import { type Book, hashSeed, ORDER_STATUSES, PRODUCT_CATEGORIES, sampleDataset, seededRandom } from "./sample-dataset.js";
import { BuiltinInputError, type BuiltinService } from "./types.js";

const limitSchema = (fallback: number, max: number) => ({
  type: "integer",
  minimum: 1,
  maximum: max,
  default: fallback,
  description: `How many rows to return (1 to ${max}, default ${fallback}).`,
});
const cursorSchema = {
  type: "string",
  maxLength: 64,
  description: "The next_cursor of the previous page, unchanged; omit it for the first page.",
};
const idSchema = (what: string, example: string) => ({
  type: "string",
  minLength: 1,
  maxLength: 32,
  description: `The ${what} id, e.g. "${example}".`,
});

const listProducts = defineTool<{ category?: string; in_stock?: boolean; limit: number; cursor?: string }>({
  handler: "sample.list_products",
  slug: "sample-list-products",
  name: "list_products",
  description:
    "List products in the demo Sample Store catalogue (200 fake products across books, electronics, garden, home, kitchen, outdoors and toys), optionally filtered by category or stock, one page at a time.",
  tags: ["demo", "sample-data", "e-commerce", "products", "pagination"],
  tips: "Pages hold up to 100 products; pass next_cursor back as cursor to get the next page, until it is null.",
  inputSchema: objectSchema({
    category: { type: "string", enum: [...PRODUCT_CATEGORIES], description: "Only products in this category." },
    in_stock: { type: "boolean", description: "true: only products in stock; false: only sold-out products." },
    limit: limitSchema(20, 100),
    cursor: cursorSchema,
  }),
  output: {
    products: {
      type: "array",
      description:
        "Products: id, name, category, description, price_cents, currency, in_stock, stock_quantity, rating, created_at.",
    },
    total: { type: "integer", description: "How many products match the filters, over all pages." },
    next_cursor: { type: "string", description: "Cursor of the next page; null on the last page." },
  },
  example: { category: "kitchen", limit: 5 },
  run({ category, in_stock, limit, cursor }) {
    const rows = sampleDataset().products.filter(
      (p) => (category === undefined || p.category === category) && (in_stock === undefined || p.in_stock === in_stock),
    );
    const { page, next_cursor } = paginate(rows, limit, cursor);
    return { products: structuredClone(page), total: rows.length, next_cursor };
  },
});

const getProduct = defineTool<{ product_id: string }>({
  handler: "sample.get_product",
  slug: "sample-get-product",
  name: "get_product",
  description:
    "Get one product of the demo Sample Store by its id: name, category, description, price in cents, stock and rating.",
  tags: ["demo", "sample-data", "e-commerce", "products"],
  tips: "Product ids run from prod_0001 to prod_0200; list_products finds them.",
  inputSchema: objectSchema({ product_id: idSchema("product", "prod_0042") }, ["product_id"]),
  output: {
    id: { type: "string", description: "Product id." },
    name: { type: "string", description: "Product name." },
    price_cents: { type: "integer", description: "Price in US cents." },
    in_stock: { type: "boolean", description: "Whether it can be ordered now." },
  },
  example: { product_id: "prod_0042" },
  run({ product_id }) {
    const product = sampleDataset().productsById.get(product_id);
    if (!product)
      throw new BuiltinInputError(
        `product_id: no product "${product_id}"; ids run from prod_0001 to prod_0200 (see list_products)`,
      );
    return structuredClone(product);
  },
});

const listOrders = defineTool<{ customer_id?: string; status?: string; limit: number; cursor?: string }>({
  handler: "sample.list_orders",
  slug: "sample-list-orders",
  name: "list_orders",
  description:
    "List orders of the demo Sample Store (500 fake orders, oldest first), optionally for one customer or in one status (pending, paid, shipped, delivered, cancelled), one page at a time, with line items and totals in cents.",
  tags: ["demo", "sample-data", "e-commerce", "orders", "pagination"],
  tips: "Pages hold up to 100 orders; pass next_cursor back as cursor until it is null. Amounts are integer US cents.",
  inputSchema: objectSchema({
    customer_id: { ...idSchema("customer", "cust_0007"), description: 'Only orders of this customer, e.g. "cust_0007".' },
    status: { type: "string", enum: [...ORDER_STATUSES], description: "Only orders in this status." },
    limit: limitSchema(20, 100),
    cursor: cursorSchema,
  }),
  output: {
    orders: {
      type: "array",
      description:
        "Orders: id, customer_id, status, items (product_id, product_name, quantity, unit_price_cents), total_cents, currency, created_at.",
    },
    total: { type: "integer", description: "How many orders match the filters, over all pages." },
    next_cursor: { type: "string", description: "Cursor of the next page; null on the last page." },
  },
  example: { status: "shipped", limit: 10 },
  run({ customer_id, status, limit, cursor }) {
    const rows = sampleDataset().orders.filter(
      (o) => (customer_id === undefined || o.customer_id === customer_id) && (status === undefined || o.status === status),
    );
    const { page, next_cursor } = paginate(rows, limit, cursor);
    return { orders: structuredClone(page), total: rows.length, next_cursor };
  },
});

const getCustomer = defineTool<{ customer_id: string }>({
  handler: "sample.get_customer",
  slug: "sample-get-customer",
  name: "get_customer",
  description:
    "Get one customer of the demo Sample Store by id: name, email, city, country, loyalty tier, plus how many orders they placed and what they spent.",
  tags: ["demo", "sample-data", "e-commerce", "customers", "crm"],
  tips: "Customer ids run from cust_0001 to cust_0100. list_orders with customer_id lists their orders.",
  inputSchema: objectSchema({ customer_id: idSchema("customer", "cust_0007") }, ["customer_id"]),
  output: {
    id: { type: "string", description: "Customer id." },
    name: { type: "string", description: "Full name." },
    email: { type: "string", description: "Email address (example.com, fake)." },
    order_count: { type: "integer", description: "Orders placed, any status." },
    total_spent_cents: { type: "integer", description: "Sum of the totals of orders not cancelled, in US cents." },
  },
  example: { customer_id: "cust_0007" },
  run({ customer_id }) {
    const data = sampleDataset();
    const customer = data.customersById.get(customer_id);
    if (!customer) throw new BuiltinInputError(`customer_id: no customer "${customer_id}"; ids run from cust_0001 to cust_0100`);
    const orders = data.orders.filter((o) => o.customer_id === customer_id);
    const spent = orders.filter((o) => o.status !== "cancelled").reduce((sum, o) => sum + o.total_cents, 0);
    return { ...customer, order_count: orders.length, total_spent_cents: spent };
  },
});

const CONDITIONS = ["sunny", "partly cloudy", "cloudy", "light rain", "rain", "thunderstorms", "fog", "snow"] as const;

const getWeather = defineTool<{ city: string; units: "metric" | "imperial"; days: number }>({
  handler: "sample.get_weather",
  slug: "sample-get-weather",
  name: "get_weather",
  description:
    "Get SAMPLE weather for a city: current temperature, conditions, humidity and wind, plus a daily forecast. Demo data generated from the city name (the same city always gives the same answer); not a real forecast.",
  tags: ["demo", "sample-data", "weather", "forecast"],
  tips: "The answer carries sample_data: true. Use it to try calls and result handling, never to decide anything.",
  inputSchema: objectSchema(
    {
      city: { type: "string", minLength: 1, maxLength: 100, description: 'City name, e.g. "Lisbon".' },
      units: {
        type: "string",
        enum: ["metric", "imperial"],
        default: "metric",
        description: "metric (°C, km/h) or imperial (°F, mph).",
      },
      days: { type: "integer", minimum: 1, maximum: 7, default: 3, description: "Forecast days (1 to 7, default 3)." },
    },
    ["city"],
  ),
  output: {
    sample_data: { type: "boolean", description: "Always true: generated, not observed." },
    current: { type: "object", description: "temperature, feels_like, condition, humidity_pct, wind_speed." },
    forecast: {
      type: "array",
      description: "One entry per day: day (1 = tomorrow), high, low, condition, precipitation_chance_pct.",
    },
  },
  example: { city: "Lisbon", days: 2 },
  run({ city, units, days }) {
    const name = city.trim().replace(/\s+/g, " ");
    if (name === "") throw new BuiltinInputError("city: must name a city, not only spaces");
    const random = seededRandom(hashSeed(name.toLowerCase()));
    const climate = -5 + random() * 30; // the city's mean temperature in °C
    const toUnit = (celsius: number) => Math.round(units === "metric" ? celsius : (celsius * 9) / 5 + 32);
    const temperature = climate + (random() - 0.5) * 10;
    const wind = 2 + random() * 40; // km/h
    return {
      city: name,
      sample_data: true,
      notice: "Sample data generated from the city name; not a real observation or forecast.",
      units,
      current: {
        temperature: toUnit(temperature),
        feels_like: toUnit(temperature - wind / 15),
        condition: pickCondition(random, temperature),
        humidity_pct: 30 + Math.floor(random() * 65),
        wind_speed: Math.round(units === "metric" ? wind : wind / 1.609344),
      },
      forecast: Array.from({ length: days }, (_, i) => {
        const high = climate + 3 + random() * 8;
        return {
          day: i + 1,
          high: toUnit(high),
          low: toUnit(high - 4 - random() * 8),
          condition: pickCondition(random, high),
          precipitation_chance_pct: 5 * Math.floor(random() * 20),
        };
      }),
    };
  },
});

function pickCondition(random: () => number, celsius: number): string {
  const condition = CONDITIONS[Math.floor(random() * CONDITIONS.length)]!;
  if (condition === "snow" && celsius > 2) return "cloudy";
  return condition;
}

const searchBooks = defineTool<{ query: string; limit: number }>({
  handler: "sample.search_books",
  slug: "sample-search-books",
  name: "search_books",
  description:
    "Search a small fixed library of 40 classic public-domain books by words in the title, author or subject (e.g. 'dickens', 'gothic horror', 'sea adventure'); best matches first.",
  tags: ["demo", "sample-data", "books", "search", "library"],
  tips: "Every query word counts; title matches weigh most, then author, then subject.",
  inputSchema: objectSchema(
    {
      query: { type: "string", minLength: 1, maxLength: 200, description: "Words to look for in titles, authors and subjects." },
      limit: limitSchema(10, 40),
    },
    ["query"],
  ),
  output: {
    total: { type: "integer", description: "How many books matched." },
    books: {
      type: "array",
      description: "Matches, best first: id, title, author, year (negative = BCE), subjects, pages, score.",
    },
  },
  example: { query: "gothic horror", limit: 3 },
  run({ query, limit }) {
    const words = tokenize(query);
    if (words.length === 0) throw new BuiltinInputError("query: needs at least one letter or digit");
    const scored = sampleDataset()
      .books.map((book) => ({ book, score: scoreBook(book, words) }))
      .filter((hit) => hit.score > 0)
      .sort((a, b) => b.score - a.score || a.book.title.localeCompare(b.book.title));
    return {
      query,
      total: scored.length,
      books: scored.slice(0, limit).map(({ book, score }) => ({ ...structuredClone(book), score })),
    };
  },
});

function tokenize(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

function scoreBook(book: Book, words: string[]): number {
  const title = new Set(tokenize(book.title));
  const author = new Set(tokenize(book.author));
  const subjects = new Set(book.subjects.flatMap(tokenize));
  return words.reduce((score, w) => score + (title.has(w) ? 3 : 0) + (author.has(w) ? 2 : 0) + (subjects.has(w) ? 1 : 0), 0);
}

export const sampleStoreService: BuiltinService = {
  slug: "sample-data",
  name: "Sample Store (demo data)",
  summary: "A fake online store, weather and book library to try tool calls safely",
  description:
    "A demo service with deterministic fake data: 200 products, 100 customers and 500 orders of an online store (with paginated listings), sample weather for any city, and a small library of classic books. It needs no credential and no network; nothing in it is real.",
  category: "demo",
  isDemo: true,
  version: "1.0.0",
  tools: [listProducts, getProduct, listOrders, getCustomer, getWeather, searchBooks],
};
