import { defineConfig, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.ts";

// The suite `pnpm mutate host` runs once per mutant (apps/host/stryker.json points here): the
// runtime's unit tests beside the source, over stand-in workers and an in-memory log. The host's
// test/ suites start daemons, Python workers and PostgreSQL; per mutant on a shared 2-core machine
// they would take hours, and the workers they spawn never see the active mutant anyway.
const UNIT = ["culling", "spares", "spares-pool", "start-gate", "workbench", "live-output", "wakes", "cells", "workbenches"];

const config = mergeConfig(
  sharedTestConfig,
  // No per-test limit: on a loaded machine a slow test would otherwise count a mutant as killed;
  // Stryker's own timeout (a Timeout, not a kill) bounds a hang.
  defineConfig({ test: { testTimeout: 600_000 } }),
);
// Set, not merged: mergeConfig would add these to the shared include (every test/ suite).
config.test!.include = UNIT.map((name) => `src/runtime/${name}.test.ts`);
export default config;
