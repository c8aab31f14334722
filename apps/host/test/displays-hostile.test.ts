// Issue 39's hostile worker: invalid base64, a wrong MIME type, a bundle without text/plain, a
// 5 MiB image in one frame. The supervisor invalidates the generation, the cell's record closes
// failed with nothing of the display stored (no blob, no list entry), and the session's next cell
// runs on a fresh real worker. The good mode pins what the host stores from the same fake.
import { fileURLToPath } from "node:url";
import { count, eq } from "drizzle-orm";
import { startWorker } from "@klbr/supervisor";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { blobs, executions } from "../src/db/schema";
import type { Host } from "../src/runtime/host";
import { startTestHost } from "./helpers";

const FAKE_DISPLAY = fileURLToPath(new URL("../../../packages/supervisor/test/fakes/display.mjs", import.meta.url));

let host: Host;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ host, close } = await startTestHost());
}, 120_000);
afterAll(async () => close?.());

/** Put the fake display worker (in `mode`) in place of the root workbench's worker, started with --display as the host starts its own. */
async function attachFake(mode: string, generation: string): Promise<void> {
  const bench = host.workbenches.get("root")!;
  await bench.worker?.shutdown();
  bench.worker = await startWorker({
    role: "workbench",
    sessionId: "root",
    generation,
    command: [process.execPath, FAKE_DISPLAY],
    env: { FAKE_DISPLAY: mode },
    display: true,
    handshakeTimeoutMs: 10_000,
    onHostReply: (event) => host.requestLog.replied(event),
  });
}

const blobCount = () => host.db.select({ n: count() }).from(blobs).get()!.n;

describe("a fake worker's displays through the host", () => {
  test("good: a PNG (its size unknown from a header that is not IHDR) and a markdown table, stored and listed", async () => {
    await attachFake("good", "g-fake-good");
    const r = await host.execute("anything");
    expect(r.status).toBe("ok");
    expect(r.displays.map((d) => [d.seq, d.text, d.images.length])).toEqual([
      [0, "<Figure size 640x480 with 1 Axes>", 1],
      [1, "| a |\n|---|", 0],
    ]);
    expect(r.displays[0]!.images[0]).toMatchObject({ mime: "image/png", bytes: 24, width: null, height: null });
  }, 60_000);

  test("all: 32 displays and the worker's displays_dropped 968 on the record", async () => {
    await attachFake("all", "g-fake-all");
    const r = await host.execute("anything");
    expect(r.displays).toHaveLength(32);
    expect(r.displays_dropped).toBe(968);
    expect(host.db.select().from(executions).where(eq(executions.id, r.id)).get()!.displaysDropped).toBe(968);
  }, 60_000);

  test.each(["bad-base64", "wrong-mime", "no-plain", "upper-mime", "over-cap", "seq-33"])(
    "%s: the generation is invalidated, the cell failed, nothing of the bad display stored, the next cell runs",
    async (mode) => {
      await attachFake(mode, `g-fake-${mode}`);
      const before = blobCount();
      const r = await host.execute("anything");
      expect(r.status).toBe("failed");
      // seq-33 sends 32 good displays first: those are listed (each stored whole); the 33rd is not.
      expect(r.displays).toHaveLength(mode === "seq-33" ? 32 : 0);
      if (mode !== "seq-33") expect(blobCount()).toBe(before);
      const next = await host.execute("display('after')\nprint('ok')");
      expect(next.status).toBe("ok");
      expect(next.displays.map((d) => d.text)).toEqual(["'after'"]);
    },
    60_000,
  );
});
