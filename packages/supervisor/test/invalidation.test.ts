import { describe, expect, it } from "vitest";
import type { FailedCompletion } from "../src/index.js";
import { startFake } from "./helpers.js";

async function violate(fake: string, env: Record<string, string> = {}): Promise<{ done: FailedCompletion; exitReason: string; state: string; signal: string | null }> {
  const worker = await startFake(fake, { env });
  const done = await worker.execute("go");
  const exit = await worker.exited;
  expect(done.kind).toBe("failed");
  return { done: done as FailedCompletion, exitReason: exit.reason, state: worker.state, signal: exit.signal };
}

describe("invalidation by a misbehaving worker", () => {
  it.each([
    ["huge-length", "frame_error:FRAME_TOO_LARGE"],
    ["cut-frame", "frame_error:FRAME_TRUNCATED"],
    ["duplicate-keys", "frame_error:FRAME_DUPLICATE_KEY"],
    ["unknown-kind", "envelope_error:ENVELOPE_UNKNOWN_KIND"],
    ["wrong-generation", "envelope_error:ENVELOPE_GENERATION_MISMATCH"],
    ["unknown-completion", "protocol_violation"],
  ])("%s fails the pending cell with %s from the host's own observation", async (fake, reason) => {
    const { done, exitReason, state } = await violate(fake);
    expect(done).toMatchObject({ kind: "failed", source: "host", reason, endedBy: "invalidated" });
    expect(done.exit).not.toBeNull();
    expect(done.tails?.stderr).toContain("recv execute");
    expect(exitReason).toBe(reason);
    expect(state).toBe("dead");
  });

  it("a completion framed before a bad frame in the same chunk still completes its cell", async () => {
    const worker = await startFake("huge-length", { env: { FAKE_COMPLETE_FIRST: "1" } });
    const done = await worker.execute("go");
    expect(done).toMatchObject({ kind: "cell", status: "ok", source: "worker", output: [{ text: "first" }] });
    expect(await worker.exited).toMatchObject({ reason: "frame_error:FRAME_TOO_LARGE" });
  });

  it("a worker that stays alive after the violation is killed", async () => {
    const { signal } = await violate("huge-length", { FAKE_STAY: "1" });
    expect(signal).toBe("SIGKILL");
  });

  it("a worker that exits in a cell fails it with worker_exited and its exit code", async () => {
    const worker = await startFake("requests");
    const done = await worker.execute("exit:3");
    expect(done).toMatchObject({ kind: "failed", source: "host", reason: "worker_exited", exit: { code: 3, signal: null } });
    await expect(worker.execute("again")).rejects.toMatchObject({ code: "WORKER_DEAD" });
  });

  it("a worker that exits with a reply unread is worker_exited (the reset it causes is its end, not a socket fault)", async () => {
    const worker = await startFake("requests");
    let replied = false;
    const done = await worker.execute("reset", { onHostRequest: () => void (replied = true) });
    expect(replied).toBe(true);
    expect(done).toMatchObject({ kind: "failed", source: "host", reason: "worker_exited", exit: { code: 5 } });
    expect(await worker.exited).toMatchObject({ reason: "worker_exited", code: 5 });
  });

  it("a dead worker's death listeners get its exit once", async () => {
    const worker = await startFake("requests");
    const seen: string[] = [];
    worker.onDeath((exit) => seen.push(exit.reason));
    await worker.hardStop("test_stop");
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toEqual(["test_stop"]);
  });
});
