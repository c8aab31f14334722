// What every file under test/ shares: the test sshd on loopback (test-support/sshd.ts), started once
// per file and stopped after it, and a bounded poll.
import { fileURLToPath } from "node:url";
import { afterAll } from "vitest";
import { startTestSshd, type TestSshd } from "../../../test-support/sshd.js";

/** The repository's python/ (the runtime the remote side installs and runs). */
export const PYTHON_DIR = fileURLToPath(new URL("../../../python", import.meta.url));

/**
 * Start this file's test sshd and stop it (and everything below it) after the file's last test.
 * Null where sshd cannot start: the caller skips its tests, and the reason is printed (under `CI`
 * that is a failure instead, thrown by startTestSshd).
 */
export async function useTestSshd(): Promise<TestSshd | null> {
  const { sshd, skip } = await startTestSshd();
  if (skip) console.warn(skip);
  afterAll(async () => {
    await sshd?.stop();
  });
  return sshd;
}

/** Poll until `check` holds (bounded generously: this box is shared and loaded). */
export async function until(check: () => boolean, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return check();
}
