import { BaseSequencer, type TestSpecification } from "vitest/node";
import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.ts";

/**
 * The unit tests beside the source (src/) before the ones over the test sshd (test/). Stryker's
 * vitest runner stops at the first failing test (bail 1), and vitest's own order runs the slowest
 * files first: a mutant of parseTarget, which every sshd test also reaches, would wait out tens of
 * seconds of sshd tests before the unit test that kills it in milliseconds.
 */
class UnitTestsFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const slow = (f: TestSpecification) => (f.moduleId.includes("/packages/remote/test/") ? 1 : 0);
    return sorted.map((f, i) => [f, i] as const).sort(([a, i], [b, j]) => slow(a) - slow(b) || i - j).map(([f]) => f);
  }
}

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
    test: {
      exclude: ["test/remote-signals.test.ts", "**/node_modules/**"],
      testTimeout: 600_000,
      sequence: { sequencer: UnitTestsFirst },
    },
  }),
);
