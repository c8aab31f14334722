import { configDefaults, defineConfig, defineProject, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.ts";

// Three projects: the host's own tests; host-pg, the embedded-host tests that exercise the Store
// again with every test host on a PostgreSQL database of the run's cluster (C21's matrix,
// KLBR_TEST_STORE=postgres: test/helpers.ts); and the real-model suite (issue 27), which starts
// llama.cpp's server with a real model and drives the CLI against it: its files run one at a time
// (two servers and a daemon already fill a 2-core machine) with a model's timeouts.

/**
 * The host tests host-pg runs on PostgreSQL: the files whose hosts come from startTestHost (or
 * startHostOnTestStore) and whose cells, turns, waits, peers, displays, limits and telemetry go
 * through the Store. Left out: tests about the SQLite file itself (migrations, read-sqlite-file,
 * host-death's lock), the `klbr serve` / CLI e2e files (serve-database and hosts-*.test.ts run the
 * daemon on PostgreSQL already), the worker, sandbox and pool tests that write no records of their
 * own (sandbox*, spares, sessions-scale, python-runtime, host-env, workspace-run, fake-workbench),
 * and the tests already on both dialects (store-contract, store-views, leases, pg-*, behaviour).
 * Left out for CI's time too (the whole run stays under 20 minutes on 2 cores): turns, limits,
 * limits-between-cells, remote, remote-close and telemetry, about half of the matrix's time (the
 * daemon's turns on PostgreSQL are hosts-turns', its limits are the worker's, not the Store's).
 * One run of the full list took about 7 minutes of wall time on a loaded 2-core machine. Like the
 * host project's C21 tests it needs PostgreSQL installed, and fails without it (never skipped).
 */
export const PG_MATRIX = [
  "test/host.test.ts",
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
  "test/live-output.test.ts",
  "test/live-output-backlog.test.ts",
  "test/live-output-requests.test.ts",
  "test/interrupt-own-cell.test.ts",
  "test/interrupt-record.test.ts",
  "test/usage-tree.test.ts",
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
