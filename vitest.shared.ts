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
    // A test waits on events, never on time, so its timeout only catches a hang. Many tests are
    // CPU-bound (property runs, Python starts): CI on a busy 2-core machine (two packages at once
    // beside two `yes`) gives each a fraction of a core, and a 5 s property test took 27 s there.
    testTimeout: 60_000,
    // Hooks start daemons, hosts and Python workers (several each), as a test does: on a loaded
    // 2-core machine vitest's 10 s default is outlasted. Bounded like a test, with room for the
    // several starts a beforeAll makes.
    hookTimeout: 60_000,
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
  },
});
