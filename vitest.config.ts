/**
 * One vitest run for the whole workspace, in two projects:
 * - unit: `*.test.ts` beside the code, no infrastructure;
 * - integration: `test/**` folders of packages and the top-level `test/e2e`, against a real Postgres
 *   and NATS JetStream that the global setup starts on free ports in a temporary folder.
 * Workspace packages resolve to their TypeScript source through the `@toolport/source` condition;
 * processes the tests spawn run the built `dist/` (the test command builds first).
 */
import { defineConfig } from "vitest/config";

const conditions = ["@toolport/source"];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          sequence: { groupOrder: 0 },
          include: ["{services/*,gateway,mcp-server,proto}/src/**/*.test.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          // Runs after the unit tests, which need no infrastructure and fail fast.
          sequence: { groupOrder: 1 },
          include: ["{services/*,gateway,mcp-server}/test/**/*.test.ts", "test/e2e/**/*.test.ts"],
          globalSetup: ["test/harness/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Two cores: files that start whole stacks must not all run at once.
          maxWorkers: 2,
        },
      },
    ],
  },
});
