/**
 * The Sample Store's fake data, generated from fixed seeds so every process and every test sees the same
 * rows: 200 products, 100 customers, 500 orders, and a small fixed list of classic books. Nothing here is
 * real; the weather generator is labelled as sample data in every answer.
 */

/** mulberry32: a tiny, well-known 32-bit PRNG; good enough for fake data, deterministic from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a of a string: turns a city name into a seed. */
export function hashSeed(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function between(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

export const PRODUCT_CATEGORIES = ["books", "electronics", "garden", "home", "kitchen", "outdoors", "toys"] as const;
export const ORDER_STATUSES = ["pending", "paid", "shipped", "delivered", "cancelled"] as const;

export interface Product {
  id: string;
  name: string;
  category: (typeof PRODUCT_CATEGORIES)[number];
  description: string;
  price_cents: number;
  currency: "USD";
  in_stock: boolean;
  stock_quantity: number;
  rating: number;
  created_at: string;
}

export interface Customer {
  id: string;
  name: string;
  email: string;
  city: string;
  country: string;
  loyalty_tier: "bronze" | "silver" | "gold";
  created_at: string;
}

export interface OrderItem {
  product_id: string;
  product_name: string;
  quantity: number;
  unit_price_cents: number;
}

export interface Order {
  id: string;
  customer_id: string;
  status: (typeof ORDER_STATUSES)[number];
  items: OrderItem[];
  total_cents: number;
  currency: "USD";
  created_at: string;
}

export interface Book {
  id: string;
  title: string;
  author: string;
  year: number;
  subjects: string[];
  pages: number;
}

const ADJECTIVES = ["Compact", "Classic", "Deluxe", "Eco", "Ergonomic", "Handmade", "Portable", "Smart", "Sturdy", "Vintage"];
const NOUNS: Record<Product["category"], readonly string[]> = {
  books: ["Notebook", "Journal", "Sketchbook", "Planner", "Atlas"],
  electronics: ["Headphones", "Speaker", "Charger", "Keyboard", "Webcam"],
  garden: ["Trowel", "Planter", "Hose", "Pruner", "Seed Kit"],
  home: ["Lamp", "Blanket", "Clock", "Mirror", "Rug"],
  kitchen: ["Kettle", "Knife Set", "Blender", "Cutting Board", "Teapot"],
  outdoors: ["Tent", "Backpack", "Lantern", "Water Bottle", "Hammock"],
  toys: ["Puzzle", "Kite", "Robot Kit", "Board Game", "Yo-yo"],
};
const FIRST_NAMES = [
  "Ada",
  "Ben",
  "Chloe",
  "Diego",
  "Emma",
  "Farah",
  "Grace",
  "Hiro",
  "Ines",
  "Jonas",
  "Kofi",
  "Lena",
  "Mateo",
  "Nadia",
  "Omar",
  "Priya",
];
const LAST_NAMES = [
  "Alvarez",
  "Berg",
  "Chen",
  "Dubois",
  "Evans",
  "Fischer",
  "Garcia",
  "Haddad",
  "Ito",
  "Jensen",
  "Kowalski",
  "Lopez",
  "Moreau",
  "Novak",
];
const PLACES: ReadonlyArray<[string, string]> = [
  ["Amsterdam", "NL"],
  ["Austin", "US"],
  ["Berlin", "DE"],
  ["Lagos", "NG"],
  ["Lisbon", "PT"],
  ["Melbourne", "AU"],
  ["Osaka", "JP"],
  ["Toronto", "CA"],
  ["Valparaiso", "CL"],
];

// Every timestamp is an offset from this fixed instant, so the data never depends on the clock.
const EPOCH = Date.UTC(2024, 0, 1);
const DAY = 86_400_000;
const isoDaysAfterEpoch = (random: () => number, maxDays: number) =>
  new Date(EPOCH + Math.floor(random() * maxDays * DAY)).toISOString().replace(/\.\d{3}Z$/, "Z");

function generateProducts(): Product[] {
  const random = seededRandom(1);
  return Array.from({ length: 200 }, (_, i) => {
    const category = PRODUCT_CATEGORIES[i % PRODUCT_CATEGORIES.length]!;
    const name = `${pick(random, ADJECTIVES)} ${pick(random, NOUNS[category])}`;
    const stock = random() < 0.15 ? 0 : between(random, 1, 250);
    return {
      id: `prod_${pad(i + 1, 4)}`,
      name,
      category,
      description: `A ${name.toLowerCase()} from the sample store's ${category} range. Sample data, not a real product.`,
      price_cents: between(random, 299, 29_999),
      currency: "USD",
      in_stock: stock > 0,
      stock_quantity: stock,
      rating: between(random, 25, 50) / 10,
      created_at: isoDaysAfterEpoch(random, 365),
    };
  });
}

function generateCustomers(): Customer[] {
  const random = seededRandom(2);
  return Array.from({ length: 100 }, (_, i) => {
    const first = pick(random, FIRST_NAMES);
    const last = pick(random, LAST_NAMES);
    const [city, country] = pick(random, PLACES);
    const tierRoll = random();
    return {
      id: `cust_${pad(i + 1, 4)}`,
      name: `${first} ${last}`,
      email: `${first.toLowerCase()}.${last.toLowerCase()}${i + 1}@example.com`,
      city,
      country,
      loyalty_tier: tierRoll < 0.6 ? "bronze" : tierRoll < 0.9 ? "silver" : "gold",
      created_at: isoDaysAfterEpoch(random, 180),
    };
  });
}

function generateOrders(products: Product[], customers: Customer[]): Order[] {
  const random = seededRandom(3);
  const orders = Array.from({ length: 500 }, (): Omit<Order, "id"> => {
    const items = Array.from({ length: between(random, 1, 4) }, (): OrderItem => {
      const product = pick(random, products);
      return {
        product_id: product.id,
        product_name: product.name,
        quantity: between(random, 1, 3),
        unit_price_cents: product.price_cents,
      };
    });
    return {
      customer_id: pick(random, customers).id,
      status: pick(random, ORDER_STATUSES),
      items,
      total_cents: items.reduce((sum, item) => sum + item.quantity * item.unit_price_cents, 0),
      currency: "USD",
      created_at: isoDaysAfterEpoch(random, 365),
    };
  });
  // Oldest first, then numbered, so ids follow time.
  orders.sort((a, b) => a.created_at.localeCompare(b.created_at));
  return orders.map((order, i) => ({ id: `ord_${pad(i + 1, 5)}`, ...order }));
}

/** Public-domain classics: a small fixed catalogue for the book search. */
const BOOK_ROWS: ReadonlyArray<[string, string, number, string, number]> = [
  ["Pride and Prejudice", "Jane Austen", 1813, "romance, society, england, marriage", 432],
  ["Emma", "Jane Austen", 1815, "romance, comedy, england", 474],
  ["Frankenstein", "Mary Shelley", 1818, "science fiction, gothic, horror", 280],
  ["Moby-Dick", "Herman Melville", 1851, "adventure, sea, whaling, obsession", 635],
  ["Jane Eyre", "Charlotte Bronte", 1847, "romance, gothic, coming of age", 532],
  ["Wuthering Heights", "Emily Bronte", 1847, "romance, gothic, revenge", 416],
  ["Great Expectations", "Charles Dickens", 1861, "coming of age, england, class", 544],
  ["A Tale of Two Cities", "Charles Dickens", 1859, "history, revolution, france, london", 489],
  ["Oliver Twist", "Charles Dickens", 1838, "crime, london, orphans, poverty", 608],
  ["The Adventures of Sherlock Holmes", "Arthur Conan Doyle", 1892, "detective, mystery, short stories, london", 307],
  ["The Hound of the Baskervilles", "Arthur Conan Doyle", 1902, "detective, mystery, gothic", 256],
  ["Dracula", "Bram Stoker", 1897, "horror, gothic, vampires", 418],
  ["The Picture of Dorian Gray", "Oscar Wilde", 1890, "philosophy, gothic, art, vanity", 254],
  ["Alice's Adventures in Wonderland", "Lewis Carroll", 1865, "fantasy, children, nonsense", 200],
  ["The Time Machine", "H. G. Wells", 1895, "science fiction, time travel, future", 118],
  ["The War of the Worlds", "H. G. Wells", 1898, "science fiction, aliens, invasion", 192],
  ["Twenty Thousand Leagues Under the Seas", "Jules Verne", 1870, "adventure, science fiction, sea, submarine", 426],
  ["Around the World in Eighty Days", "Jules Verne", 1872, "adventure, travel, wager", 256],
  ["The Count of Monte Cristo", "Alexandre Dumas", 1844, "adventure, revenge, prison, france", 1276],
  ["The Three Musketeers", "Alexandre Dumas", 1844, "adventure, history, france, swordplay", 700],
  ["Les Miserables", "Victor Hugo", 1862, "history, france, justice, poverty", 1463],
  ["War and Peace", "Leo Tolstoy", 1869, "history, war, russia, napoleon", 1225],
  ["Anna Karenina", "Leo Tolstoy", 1878, "romance, society, russia, tragedy", 864],
  ["Crime and Punishment", "Fyodor Dostoevsky", 1866, "crime, psychology, russia, guilt", 671],
  ["The Brothers Karamazov", "Fyodor Dostoevsky", 1880, "philosophy, family, faith, russia", 796],
  ["Don Quixote", "Miguel de Cervantes", 1605, "adventure, comedy, chivalry, spain", 1072],
  ["The Odyssey", "Homer", -700, "epic, poetry, voyage, greek mythology", 541],
  ["The Adventures of Huckleberry Finn", "Mark Twain", 1884, "adventure, river, friendship, america", 366],
  ["The Adventures of Tom Sawyer", "Mark Twain", 1876, "adventure, children, america", 274],
  ["Little Women", "Louisa May Alcott", 1868, "family, coming of age, sisters, america", 759],
  ["The Scarlet Letter", "Nathaniel Hawthorne", 1850, "puritan, guilt, america", 272],
  ["Treasure Island", "Robert Louis Stevenson", 1883, "adventure, pirates, sea, treasure", 292],
  ["Strange Case of Dr Jekyll and Mr Hyde", "Robert Louis Stevenson", 1886, "horror, psychology, london", 141],
  ["The Jungle Book", "Rudyard Kipling", 1894, "children, animals, india, fables", 277],
  ["Heart of Darkness", "Joseph Conrad", 1899, "colonialism, river, africa", 96],
  ["The Call of the Wild", "Jack London", 1903, "adventure, dogs, yukon, survival", 232],
  ["The Art of War", "Sun Tzu", -500, "strategy, military, philosophy", 68],
  ["Meditations", "Marcus Aurelius", 180, "philosophy, stoicism, self improvement", 254],
  ["On the Origin of Species", "Charles Darwin", 1859, "science, biology, evolution", 502],
  ["The Wealth of Nations", "Adam Smith", 1776, "economics, trade, markets", 1264],
];

function booksFromRows(): Book[] {
  return BOOK_ROWS.map(([title, author, year, subjects, pages], i) => ({
    id: `book_${pad(i + 1, 3)}`,
    title,
    author,
    year,
    subjects: subjects.split(", "),
    pages,
  }));
}

export interface SampleDataset {
  products: Product[];
  customers: Customer[];
  orders: Order[];
  books: Book[];
  productsById: Map<string, Product>;
  customersById: Map<string, Customer>;
}

let dataset: SampleDataset | undefined;

/** The dataset, generated on first use (a few milliseconds) and kept. */
export function sampleDataset(): SampleDataset {
  if (dataset) return dataset;
  const products = generateProducts();
  const customers = generateCustomers();
  const orders = generateOrders(products, customers);
  dataset = {
    products,
    customers,
    orders,
    books: booksFromRows(),
    productsById: new Map(products.map((p) => [p.id, p])),
    customersById: new Map(customers.map((c) => [c.id, c])),
  };
  return dataset;
}
