import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.ts";

// The suite `pnpm mutate remote` runs once per mutant (packages/remote/stryker.json points here).
// Left out: test/remote-signals.test.ts, the worker-level cases over the test sshd (live output,
// interrupt rungs, kills, the hard stop), each several seconds of a remote worker and its grace
// timers; per mutant on a shared 2-core machine they would take hours. They exercise the supervisor
// and the Python keeper more than this package's code; a mutant is never counted killed by them.
// test/remote.test.ts (probe, install, open cold and warm, refusals) stays in, over the real sshd.
export default mergeConfig(
  base,
  defineConfig({
    // No per-test limit: on a loaded machine a slow test would otherwise count a mutant as killed;
    // Stryker's own timeout (a Timeout, not a kill) bounds a hang.
    test: { exclude: ["test/remote-signals.test.ts", "**/node_modules/**"], testTimeout: 600_000 },
  }),
);
