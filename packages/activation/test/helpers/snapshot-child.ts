// One process of the concurrent snapshot test (test/snapshot-race.test.ts).
// argv: draftDir releasesDir. Parent "go" -> snapshotRelease; reports {digest, path, reused} or {code}.
import { isActivationError, snapshotRelease } from "../../src/index.js";

const [draft, releases] = process.argv.slice(2) as [string, string];
process.on("message", (message) => {
  if (message !== "go") return;
  try {
    const { digest, path, reused } = snapshotRelease(draft, releases);
    process.send!({ phase: "done", pid: process.pid, digest, path, reused });
  } catch (error) {
    process.send!({ phase: "done", pid: process.pid, code: isActivationError(error) ? error.code : String(error) });
  } finally {
    process.disconnect();
  }
});
process.send!({ phase: "ready", pid: process.pid });
