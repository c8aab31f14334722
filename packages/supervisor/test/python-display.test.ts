// C20 display through the supervisor with the real Python worker (--display): a matplotlib plot
// arrives as image/png of the figure's size, a 5 MiB image as text/plain with klbr/omitted, 1,000
// display() calls as 32 displays and 968 counted, every one validated by @klbr/envelope on the way.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CellDisplay, Worker } from "../src/index.js";
import { startPython } from "./helpers.js";

/** Width and height from a PNG's IHDR chunk. */
function pngSize(base64: string): [number, number] {
  const bytes = Buffer.from(base64, "base64");
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

describe("display from the real Python worker", () => {
  let worker: Worker;
  beforeAll(async () => {
    worker = await startPython({ display: true, handshakeTimeoutMs: 30_000 });
  }, 60_000);
  afterAll(async () => {
    await worker?.shutdown();
  });

  it("plt.show() of a real matplotlib figure arrives as image/png of the figure's size, before the completion", async () => {
    const seen: CellDisplay[] = [];
    const done = await worker.execute("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()", { onDisplay: (d) => seen.push(d) });
    expect(done).toMatchObject({ kind: "cell", status: "ok", displays_dropped: 0 });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.data["text/plain"]).toMatch(/^<Figure size 640x480/);
    expect(pngSize(seen[0]!.data["image/png"]!)).toEqual([640, 480]);
  }, 60_000);

  it("a 5 MiB image is text/plain with klbr/omitted; 1,000 display() calls are 32 displays and 968 counted", async () => {
    const big: CellDisplay[] = [];
    await worker.execute(
      "class Big:\n    def __repr__(self): return 'Big()'\n    def _repr_png_(self): return b'\\x89PNG\\r\\n\\x1a\\n' + bytes(5 * 1024 * 1024)\nBig()",
      { onDisplay: (d) => big.push(d) },
    );
    expect(big).toEqual([{ id: expect.any(String), seq: 0, data: { "text/plain": "Big()" }, metadata: { "klbr/omitted": { "image/png": 5 * 1024 * 1024 + 8 } } }]);
    const many: CellDisplay[] = [];
    const done = await worker.execute("for i in range(1000):\n    display(i)", { onDisplay: (d) => many.push(d) });
    expect(many.map((d) => d.data["text/plain"])).toEqual([...Array(32).keys()].map(String));
    expect(done).toMatchObject({ kind: "cell", status: "ok", displays_dropped: 968 });
    expect(worker.state).toBe("ready");
  }, 60_000);
});
