// Debian's chromium for the web view's browser tests and bench (C23), driven by playwright-core
// with an executablePath: playwright's own browser download is not reachable here. A missing
// browser fails, never skips (.ci/run installs it).
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

/** Where the browser is: KLBR_TEST_CHROMIUM, else Debian's /usr/bin/chromium. */
export function chromiumPath(env: NodeJS.ProcessEnv = process.env): string {
  const path = env.KLBR_TEST_CHROMIUM ?? "/usr/bin/chromium";
  if (!existsSync(path)) throw new Error(`no chromium at ${path}: apt-get install chromium (or set KLBR_TEST_CHROMIUM)`);
  return path;
}

/** A headless chromium; as root it cannot use its own sandbox, so it runs without. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions"],
  });
}
