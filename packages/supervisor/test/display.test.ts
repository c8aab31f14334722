// C20 display through the supervisor with a fake worker: a well-formed stream reaches onDisplay in
// order before the completion, and every hostile variant (bad base64, a wrong MIME type, a 5 MiB
// image in one frame, a 33rd display, an unnegotiated display, ...) invalidates the generation.
import { describe, expect, it } from "vitest";
import type { CellDisplay } from "../src/index.js";
import { startFake } from "./helpers.js";

describe("display from a worker started with --display", () => {
  it("is handed to onDisplay in seq order, all of it before the completion, which carries displays_dropped", async () => {
    const worker = await startFake("display", { display: true });
    const seen: CellDisplay[] = [];
    let settled = false;
    const pending = worker.execute("go", {
      onDisplay: (display) => {
        expect(settled).toBe(false);
        seen.push(display);
      },
    });
    const done = await pending.finally(() => (settled = true));
    expect(done).toMatchObject({ kind: "cell", status: "ok", source: "worker", displays_dropped: 0 });
    expect(seen.map((d) => [d.id, d.seq, Object.keys(d.data)])).toEqual([
      [done.id, 0, ["text/plain", "image/png"]],
      [done.id, 1, ["text/plain", "text/markdown"]],
    ]);
    expect(seen[0]!.metadata).toEqual({ "image/png": { width: 640, height: 480 } });
    expect(Buffer.from(seen[0]!.data["image/png"]!, "base64").subarray(0, 4).toString("latin1")).toBe("\x89PNG");
    await worker.shutdown();
  });

  it("32 displays and the rest counted: displays_dropped reaches the completion", async () => {
    const worker = await startFake("display", { display: true, env: { FAKE_DISPLAY: "all" } });
    const seen: CellDisplay[] = [];
    const done = await worker.execute("go", { onDisplay: (d) => seen.push(d) });
    expect(seen.map((d) => d.seq)).toEqual([...Array(32).keys()]);
    expect(done).toMatchObject({ kind: "cell", status: "ok", displays_dropped: 968 });
    await worker.shutdown();
  });

  it("a listener that throws is the host's problem, not a violation", async () => {
    const worker = await startFake("display", { display: true });
    const done = await worker.execute("go", {
      onDisplay: () => {
        throw new Error("store down");
      },
    });
    expect(done).toMatchObject({ kind: "cell", status: "ok" });
    expect(worker.state).toBe("ready");
    await worker.shutdown();
  });
});

describe("display that breaks C20 invalidates the generation", () => {
  it("a hooks worker never negotiates it: a display from one is a violation", async () => {
    const worker = await startFake("display", { role: "hooks", display: true, env: { FAKE_DISPLAY: "for-hooks" } });
    const done = await worker.invoke("delivery.review", { effect_id: "e-1", destination: "operator", text: "hi" });
    expect(done).toMatchObject({ kind: "failed" });
    expect((await worker.exited).reason).toBe("protocol_violation");
  });

  it.each([
    ["good", false, "protocol_violation"],
    ["bad-base64", true, "envelope_error:ENVELOPE_DISPLAY_ENCODING"],
    ["wrong-mime", true, "envelope_error:ENVELOPE_DISPLAY_ENCODING"],
    ["upper-mime", true, "envelope_error:ENVELOPE_DISPLAY_MIME"],
    ["no-plain", true, "envelope_error:ENVELOPE_MISSING_FIELD"],
    ["over-cap", true, "frame_error:FRAME_TOO_LARGE"],
    ["seq-33", true, "envelope_error:ENVELOPE_LIMIT_EXCEEDED"],
    ["out-of-order", true, "protocol_violation"],
    ["unknown-operation", true, "protocol_violation"],
    ["dropped-early", true, "protocol_violation"],
    ["no-dropped", true, "protocol_violation"],
    ["no-dropped", false, "ok"],
    ["after-completed", true, "protocol_violation"],
  ])("FAKE_DISPLAY=%s (display %s) ends the worker with %s", async (mode, display, reason) => {
    const worker = await startFake("display", { display, env: { FAKE_DISPLAY: mode } });
    const seen: CellDisplay[] = [];
    const done = await worker.execute("go", { onDisplay: (d) => seen.push(d) });
    if (reason === "ok") {
      expect(done).toMatchObject({ kind: "cell", status: "ok" });
      expect(done).not.toHaveProperty("displays_dropped");
      await worker.shutdown();
      return;
    }
    const exit = await worker.exited;
    expect(exit.reason).toBe(reason);
    expect(worker.state).toBe("dead");
    if (mode === "after-completed") expect(done).toMatchObject({ kind: "cell", status: "ok" }); // completed first; the late display ends the generation
    else expect(done).toMatchObject({ kind: "failed", source: "host", reason, endedBy: "invalidated" });
    // Nothing that broke a rule reached the listener: only the valid displays before it did.
    const delivered = { "seq-33": 32, "out-of-order": 1, "dropped-early": 1, "after-completed": 0 } as Record<string, number>;
    expect(seen.length).toBe(delivered[mode] ?? 0);
  });
});
