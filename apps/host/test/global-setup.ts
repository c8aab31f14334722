import { bundleCli } from "./cli-bundle";

/**
 * Once per test run: bundle the CLI from source (see cli-bundle.ts) and hand its path to the test
 * processes through the environment they inherit. KLBR_TEST_BUILT=1 runs the built binary instead.
 */
export default async function setup(): Promise<(() => void) | undefined> {
  if (process.env.KLBR_TEST_BUILT === "1" || process.env.KLBR_TEST_CLI_BUNDLE) return undefined;
  const bundle = await bundleCli();
  process.env.KLBR_TEST_CLI_BUNDLE = bundle.entry;
  return () => {
    delete process.env.KLBR_TEST_CLI_BUNDLE;
    bundle.dispose();
  };
}
