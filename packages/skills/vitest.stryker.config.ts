import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.ts";

// The suite `pnpm mutate skills` runs once per mutant (packages/skills/stryker.json points here).
// Left out, so a mutant is never counted killed by them and never waits on them:
// - test/unreadable.test.ts indexes in a child process running as `nobody` (root reads any file),
//   which never sees Stryker's active mutant: it cannot kill one, it only costs 9 s per run.
// - test/cross-language.test.ts spawns Python for each case; the fixtures/skills vectors, run
//   in-process, pin the same rules. It stays in `pnpm test`.
export default mergeConfig(
  base,
  defineConfig({
    // A test that fails only because this loaded machine made it slow would count a mutant as
    // killed: no per-test limit here; Stryker's own timeout (a Timeout, not a kill) bounds a hang.
    test: { exclude: ["test/unreadable.test.ts", "test/cross-language.test.ts", "**/node_modules/**"], testTimeout: 600_000 },
  }),
);
