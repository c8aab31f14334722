import { configDefaults, defineConfig, defineProject, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.ts";

// Two projects: the host's own tests, and the real-model suite (issue 27), which starts llama.cpp's
// server with a real model and drives the CLI against it: its files run one at a time (two
// servers and a daemon already fill a 2-core machine) with a model's timeouts.
export default defineConfig({
  test: {
    projects: [
      mergeConfig(sharedTestConfig, defineProject({ test: { name: "host", globalSetup: ["test/global-setup.ts", "test/pg-global-setup.ts"], exclude: [...configDefaults.exclude, "test/real-model/**"] } })),
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
