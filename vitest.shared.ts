import { defineConfig } from "vitest/config";

/**
 * Shared test settings. The "@klbr/source" condition points workspace imports at each
 * package's src/, so one package's tests never need another's dist/ built first.
 * forks (not threads): native modules such as better-sqlite3 break under worker threads.
 */
export const sharedTestConfig = defineConfig({
  resolve: { conditions: ["@klbr/source"] },
  ssr: { resolve: { conditions: ["@klbr/source"], externalConditions: ["@klbr/source"] } },
  test: {
    pool: "forks",
    testTimeout: 20_000,
    // Hooks start daemons, hosts and Python workers (several each), as a test does: on a loaded
    // 2-core machine vitest's 10 s default is outlasted. Bounded like a test, with room for the
    // several starts a beforeAll makes.
    hookTimeout: 60_000,
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
  },
});
