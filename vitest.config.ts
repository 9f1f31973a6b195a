/**
 * One vitest run for the whole workspace, in two projects:
 * - unit: `*.test.ts` beside the code, no infrastructure;
 * - integration: `test/**` folders of packages and the top-level `test/e2e`, `test/security` (issue 18's
 *   fuzzing, tenant matrix, SSRF and redaction corpora) and `test/soak` (the short soak), against a real Postgres
 *   and NATS JetStream that the global setup starts on free ports in a temporary folder; stacks run
 *   every role in one process (the default layout, test/harness/stack.ts);
 * - integration-per-role: a representative part of those again, with a process per role.
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
          include: ["{services/*,services/lib/*,gateway,gateway/client,mcp-server,proto}/src/**/*.test.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          // Runs after the unit tests, which need no infrastructure and fail fast.
          sequence: { groupOrder: 1 },
          include: [
            "{services/*,services/lib/*,gateway,mcp-server}/test/**/*.test.ts",
            "test/e2e/**/*.test.ts",
            "test/security/**/*.test.ts",
            "test/soak/**/*.test.ts",
          ],
          globalSetup: ["test/harness/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Two cores: files that start whole stacks must not all run at once.
          maxWorkers: 2,
        },
      },
      {
        extends: true,
        test: {
          // The same tests with every role in a process of its own, calling each other over gRPC (the
          // integration project runs stacks as one process): a call, a batch, a priced call, a revoked
          // key, events across processes, and every service, the gateway and the MCP server.
          name: "integration-per-role",
          sequence: { groupOrder: 2 },
          include: [
            "test/e2e/execution-calls.test.ts",
            "test/e2e/execution-auth-cache.test.ts",
            "test/e2e/identity-keys.test.ts",
            "test/e2e/activity.test.ts",
            "test/e2e/mcp-server.test.ts",
            "test/e2e/catalog-http.test.ts",
          ],
          env: { TOOLPORT_STACK_LAYOUT: "per-role" },
          globalSetup: ["test/harness/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          maxWorkers: 2,
        },
      },
    ],
  },
});
