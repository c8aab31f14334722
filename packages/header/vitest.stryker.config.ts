import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.ts";

// The suite `pnpm mutate header` runs once per mutant (packages/header/stryker.json points here).
// KLBR_MUTATION cuts src/change.property.test.ts to a tenth of its fast-check runs: each covering
// mutant reruns it, and at full count it dominated the run. No per-test limit: on a loaded machine a
// slow test would otherwise count a mutant as killed; Stryker's own timeout (a Timeout) bounds a hang.
export default mergeConfig(base, defineConfig({ test: { env: { KLBR_MUTATION: "1" }, testTimeout: 600_000 } }));
