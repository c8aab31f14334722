import { configDefaults, defineConfig, defineProject, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.ts";

// Three projects: the host's own tests; host-pg, the embedded-host tests that exercise the Store
// again with every test host on a PostgreSQL database of the run's cluster (C21's matrix,
// KLBR_TEST_STORE=postgres: test/helpers.ts); and the real-model suite (issue 27), which starts
// llama.cpp's server with a real model and drives the CLI against it: its files run one at a time
// (two servers and a daemon already fill a 2-core machine) with a model's timeouts.

/**
 * The host tests host-pg runs on PostgreSQL: every file whose hosts come from startTestHost and
 * whose records go through the Store. Left out: tests about the SQLite file itself (migrations,
 * read-sqlite-file, host-death's file lock), tests that write records into the SQLite file
 * directly to stage a crash (restart.test.ts stages its crash through the Store, so it runs here), the CLI/daemon e2e files (`klbr serve`
 * processes: serve-database and hosts-*.test.ts run those on PostgreSQL already), and the tests
 * that are PostgreSQL's own or both dialects' already (store-contract, store-views, leases, pg-*).
 */
export const PG_MATRIX = [
  "test/host.test.ts",
  "test/turns.test.ts",
  "test/turns-edges.test.ts",
  "test/turns-displays.test.ts",
  "test/displays.test.ts",
  "test/displays-hostile.test.ts",
  "test/peers.test.ts",
  "test/peers-edges.test.ts",
  "test/peers-concurrency.test.ts",
  "test/peers-driven.test.ts",
  "test/waits.e2e.test.ts",
  "test/defer.e2e.test.ts",
  "test/orientation.test.ts",
  "test/telemetry.test.ts",
  "test/live-output.test.ts",
  "test/live-output-backlog.test.ts",
  "test/live-output-requests.test.ts",
  "test/limits.test.ts",
  "test/limits-between-cells.test.ts",
  "test/interrupt-own-cell.test.ts",
  "test/interrupt-record.test.ts",
  "test/usage-tree.test.ts",
  "test/remote.test.ts",
  "test/remote-close.test.ts",
  "test/control.test.ts",
  "test/control-log-page.test.ts",
  "test/restart.test.ts",
];

export default defineConfig({
  test: {
    projects: [
      mergeConfig(sharedTestConfig, defineProject({ test: { name: "host", globalSetup: ["test/global-setup.ts", "test/pg-global-setup.ts"], exclude: [...configDefaults.exclude, "test/real-model/**"] } })),
      defineProject({
        resolve: sharedTestConfig.resolve,
        ssr: sharedTestConfig.ssr,
        // Not mergeConfig: it would add PG_MATRIX to the shared include (every test) instead of replacing it.
        test: { ...sharedTestConfig.test, name: "host-pg", globalSetup: ["test/global-setup.ts", "test/pg-global-setup.ts"], include: PG_MATRIX, env: { KLBR_TEST_STORE: "postgres" } },
      }),
      defineProject({
        resolve: sharedTestConfig.resolve,
        ssr: sharedTestConfig.ssr,
        test: {
          name: "real-model",
          globalSetup: ["test/global-setup.ts"],
          pool: "forks",
          include: ["test/real-model/**/*.test.ts"],
          fileParallelism: false,
          // A turn may run to max_cells_per_turn (50 model steps) when the model repeats a failing cell.
          testTimeout: 1_800_000,
          hookTimeout: 300_000,
        },
      }),
    ],
  },
});
