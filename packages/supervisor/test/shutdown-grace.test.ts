import { describe, expect, it } from "vitest";
import { startFake } from "./helpers.js";

// Issue 25 "a hang is not a catch": dropping the kill in shutdown()'s grace timer (worker.ts)
// left shutdown() pending for ever, caught only by vitest's 20 s timeout. Here the same mutant
// fails with a message as soon as a bound far past the grace has gone by. The bound is a liveness
// limit (the kill must happen at all), not a speed assertion: 40x the grace.

const GRACE_MS = 200;
const BOUND_MS = 40 * GRACE_MS;

/** `promise`'s value, or a rejection naming what did not happen within `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms (the grace is ${GRACE_MS} ms)`)), ms);
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

describe("shutdown grace", () => {
  it("a worker that ignores shutdown is killed after the grace, and shutdown() resolves with shutdown_timeout", async () => {
    const worker = await startFake("requests", { shutdownGraceMs: GRACE_MS, env: { FAKE_IGNORE_SHUTDOWN: "1" } });
    const exit = await within(worker.shutdown(), BOUND_MS, "the worker that ignored shutdown was not killed after its grace: shutdown() did not resolve");
    expect(exit).toMatchObject({ reason: "shutdown_timeout", signal: "SIGKILL" });
  }, BOUND_MS + 10_000);
});
