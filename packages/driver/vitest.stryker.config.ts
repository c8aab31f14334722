import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.ts";

// The suite `pnpm mutate driver` runs once per mutant (packages/driver/stryker.json points here):
// the whole suite, with no per-test time limit. On a loaded machine a test that is only slow would
// otherwise fail and count a mutant as killed; Stryker's own timeout (a Timeout) bounds a hang.
export default mergeConfig(base, defineConfig({ test: { testTimeout: 600_000 } }));
