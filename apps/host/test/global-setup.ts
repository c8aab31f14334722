import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleCli } from "./cli-bundle";

/**
 * Once per test run: bundle the CLI from source (see cli-bundle.ts) and hand its path to the test
 * processes through the environment they inherit. KLBR_TEST_BUILT=1 runs the built binary instead.
 * The hosts of the run share one bytecode cache of their own (runtime/bytecode.ts), removed at the
 * end: the runtime copies tests make would otherwise each leave a zip in the user's cache.
 */
export default async function setup(): Promise<(() => void) | undefined> {
  const cacheDir = process.env.KLBR_BYTECODE_CACHE ? null : mkdtempSync(join(tmpdir(), "klbr-bc-"));
  if (cacheDir) process.env.KLBR_BYTECODE_CACHE = cacheDir;
  const removeCache = () => {
    if (!cacheDir) return;
    delete process.env.KLBR_BYTECODE_CACHE;
    rmSync(cacheDir, { recursive: true, force: true });
  };
  if (process.env.KLBR_TEST_BUILT === "1" || process.env.KLBR_TEST_CLI_BUNDLE) return removeCache;
  const bundle = await bundleCli();
  process.env.KLBR_TEST_CLI_BUNDLE = bundle.entry;
  return () => {
    delete process.env.KLBR_TEST_CLI_BUNDLE;
    bundle.dispose();
    removeCache();
  };
}
