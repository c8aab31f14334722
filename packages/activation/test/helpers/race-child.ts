// One contender of the activation race (test/race.test.ts): its own process and connection.
// argv: dbFile releasePath expectedEpoch. Messages: parent "go" -> activate; in the handshake the
// child reports "handshake" and waits for the parent's "proceed", so every contender has passed
// verification and the early epoch check before any of them reaches the compare-and-swap.
import { isActivationError, openActivationStore, openDatabase } from "../../src/index.js";

const [dbFile, releasePath, expected] = process.argv.slice(2) as [string, string, string];
// Contenders queue for the write lock; under CI load 24 of them can wait longer than the default 5 s.
const db = openDatabase(dbFile, { busyTimeoutMs: 60_000 });
const store = openActivationStore(db);
let proceed: () => void = () => {};
const proceeded = new Promise<void>((resolve) => (proceed = resolve));

async function run(): Promise<void> {
  try {
    const revision = await store.activate({ path: releasePath, expectedEpoch: Number(expected) }, async () => {
      process.send!({ phase: "handshake", pid: process.pid });
      await proceeded;
    });
    process.send!({ phase: "done", pid: process.pid, won: revision.epoch });
  } catch (error) {
    process.send!({ phase: "done", pid: process.pid, code: isActivationError(error) ? error.code : String(error) });
  } finally {
    db.close();
    process.disconnect();
  }
}

process.on("message", (message) => {
  if (message === "go") void run();
  if (message === "proceed") proceed();
});
process.send!({ phase: "ready", pid: process.pid });
