import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.ts";

// The suite `pnpm mutate activation` runs once per mutant (packages/activation/stryker.json points
// here). Left out, so a mutant is never counted killed by them and never waits on them (the score
// can only be lower for it); they stay in `pnpm test`:
// - test/race.test.ts and test/snapshot-race.test.ts fork 24 contenders each from a bundle of src,
//   which never sees Stryker's active mutant; seconds per run.
// - test/cross-language.test.ts spawns Python for each case; the in-process digest, manifest and
//   name tests pin the same rules.
// - KLBR_MUTATION cuts the property tests to a tenth of their cases (test/helpers/runs.ts): each
//   covering mutant reruns them.
// No per-test limit: on a loaded machine a slow test would otherwise count a mutant as killed;
// Stryker's own timeout (a Timeout, not a kill) bounds a hang.
export default mergeConfig(
  base,
  defineConfig({
    test: {
      env: { KLBR_MUTATION: "1" },
      exclude: ["test/race.test.ts", "test/snapshot-race.test.ts", "test/cross-language.test.ts", "**/node_modules/**"],
      testTimeout: 600_000,
    },
  }),
);
