import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.ts";

// The suite `pnpm mutate envelope` runs once per mutant (packages/envelope/stryker.json points here).
// - KLBR_MUTATION cuts the property and seeded-corpus tests to a tenth of their cases
//   (test/runs.ts): each covering mutant reruns them.
// - Left out: test/differential.test.ts, which spawns Python on thousands of seeded inputs each time
//   its file loads; the shared vectors and the in-process tests pin the same rules. It stays in
//   `pnpm test`. A mutant is never counted killed by it (the score can only be lower for it).
// No per-test limit: on a loaded machine a slow test would otherwise count a mutant as killed;
// Stryker's own timeout (a Timeout, not a kill) bounds a hang.
export default mergeConfig(
  base,
  defineConfig({
    test: { env: { KLBR_MUTATION: "1" }, exclude: ["test/differential.test.ts", "**/node_modules/**"], testTimeout: 600_000 },
  }),
);
