// C20 through the host: a real Python worker's displays are stored once by digest (bundles and
// image bytes), listed in order on the execution's record and in its report, and pushed live to
// the execution's watchers in order with its output; the bad inputs of issue 39 each end clearly
// and store nothing half.
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { blobs, executions } from "../src/db/schema";
import type { Host } from "../src/runtime/host";
import type { LiveDisplayEvent, LiveOutputEvent } from "../src/runtime/live-output";
import { blobReply } from "../src/control/blob-get";
import { startTestHost } from "./helpers";

const HELPERS = readFileSync(new URL("./display-cells.py", import.meta.url), "utf8");
const cell = (code: string) => `${HELPERS}\n${code}`;

let host: Host;
let close: () => Promise<void>;
beforeAll(async () => {
  ({ host, close } = await startTestHost());
}, 120_000);
afterAll(async () => close?.());

const blobCount = () => host.db.select({ n: count() }).from(blobs).get()!.n;
const sha = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

describe("a cell's displays on its record", () => {
  test("in order, each image's bytes once by digest with its size, the bundle once by digest", async () => {
    const before = blobCount();
    const r = await host.execute(cell(["p = Picture(3, 2)", "display(p)", "print('between')", "display(p, {'k': 1})", "p"].join("\n")));
    expect(r.status).toBe("ok");
    expect(r.origin).toBe("exec");
    expect(r.displays_dropped).toBe(0);
    expect(r.displays.map((d) => [d.seq, d.mimes, d.text])).toEqual([
      [0, ["text/plain", "image/png"], "<Picture 3x2>"],
      [1, ["text/plain", "image/png"], "<Picture 3x2>"],
      [2, ["text/plain"], "{'k': 1}"],
      [3, ["text/plain", "image/png"], "<Picture 3x2>"],
    ]);
    const image = r.displays[0]!.images[0]!;
    expect(image).toMatchObject({ mime: "image/png", width: 3, height: 2 });
    expect(image.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    // The same picture three times: one bundle, one image; with the dict's bundle, three new blobs at most.
    expect(r.displays[1]!.digest).toBe(r.displays[0]!.digest);
    expect(r.displays[3]!.digest).toBe(r.displays[0]!.digest);
    expect(blobCount() - before).toBeLessThanOrEqual(3);
    const bytes = Buffer.from((await blobReply(host.store, image.digest)).base64, "base64");
    expect(sha(bytes)).toBe(image.digest);
    expect(bytes.length).toBe(image.bytes);
    expect(bytes.subarray(1, 4).toString()).toBe("PNG");
    const bundle = await blobReply(host.store, r.displays[0]!.digest);
    expect(bundle.media_type).toBe("application/vnd.klbr.display+json");
    const doc = JSON.parse(Buffer.from(bundle.base64, "base64").toString());
    expect(doc).toEqual({ data: { "text/plain": "<Picture 3x2>" }, images: { "image/png": image.digest }, metadata: {} });
    expect(sha(Buffer.from(bundle.base64, "base64"))).toBe(r.displays[0]!.digest);
    // The durable row says the same as the report.
    const row = host.db.select().from(executions).where(eq(executions.id, r.id)).get()!;
    expect(row.displays).toEqual(r.displays);
    expect(row.displaysDropped).toBe(0);
    expect(row.origin).toBe("exec");
  }, 60_000);

  test("markdown is what the model reads; text/plain is kept beside it", async () => {
    const r = await host.execute(cell("class T:\n    def _repr_markdown_(self): return '| a |\\n|---|'\n    def __repr__(self): return 'T()'\ndisplay(T())"));
    expect(r.displays).toHaveLength(1);
    expect(r.displays[0]).toMatchObject({ text: "| a |\n|---|", plain: "T()", mimes: ["text/plain", "text/markdown"], images: [] });
  }, 60_000);

  test("a cell that shows nothing lists nothing", async () => {
    const r = await host.execute("1 + 1");
    expect(r.displays).toEqual([]);
    expect(r.displays_dropped).toBe(0);
  }, 60_000);

  test("live watchers get each display once stored, in order with the output", async () => {
    const seen: Array<LiveOutputEvent | LiveDisplayEvent> = [];
    const id = "ex-live-display";
    const stop = host.liveOutput!.watch({ executionId: id }, (e) => seen.push(e), (e) => seen.push(e));
    try {
      const r = await host.execute(cell("import sys\nprint('a'); sys.stdout.flush()\ndisplay(Picture(2, 2))\nprint('b'); sys.stdout.flush()\ndisplay('x')"), "root", { executionId: id });
      expect(r.status).toBe("ok");
      const order = seen.map((e) => (e.type === "display" ? `display:${e.display.seq}` : e.text.trim())).filter((t) => t !== "");
      expect(order).toEqual(["a", "display:0", "b", "display:1"]);
      const shown = seen.filter((e): e is LiveDisplayEvent => e.type === "display");
      expect(shown.map((e) => e.display)).toEqual(r.displays);
      expect(shown[0]).toMatchObject({ execution_id: id, session: "root", session_id: "root" });
      // What a watcher is told about can be fetched at once (stored before it was published).
      expect((await blobReply(host.store, shown[0]!.display.images[0]!.digest)).media_type).toBe("image/png");
    } finally {
      stop();
    }
  }, 60_000);
});

describe("bad input (issue 39): a clear outcome, the cell and the host go on, nothing half stored", () => {
  test("a _repr_png_ returning text: skipped with a stderr line, text/plain shown, the cell ok", async () => {
    const r = await host.execute("class Bad:\n    def _repr_png_(self): return 'not bytes'\n    def __repr__(self): return 'Bad()'\ndisplay(Bad())\nprint('after')");
    expect(r.status).toBe("ok");
    expect(r.output.filter((o) => o.stream === "stderr").map((o) => o.text).join("")).toContain("_repr_png_");
    expect(r.displays.map((d) => [d.mimes, d.text, d.images])).toEqual([[["text/plain"], "Bad()", []]]);
  }, 60_000);

  test("a 5 MiB image: text/plain with what was omitted, no image stored", async () => {
    const before = blobCount();
    const r = await host.execute(cell("import os\nbig = Picture(1, 1)\nbig.data = big.data + os.urandom(5 * 1024 * 1024)\ndisplay(big)"));
    expect(r.status).toBe("ok");
    expect(r.displays).toHaveLength(1);
    const d = r.displays[0]!;
    expect(d.mimes).toEqual(["text/plain"]);
    expect(d.images).toEqual([]);
    expect(d.omitted!["image/png"]).toBeGreaterThan(5 * 1024 * 1024);
    expect(blobCount() - before).toBeLessThanOrEqual(1); // the bundle alone
  }, 60_000);

  test("1,000 display() calls: 32 listed, 968 dropped, the cell goes on", async () => {
    const r = await host.execute(cell("for i in range(1000):\n    display(Picture(1, 1, (i % 256, 0, 0)))\nprint('done')"));
    expect(r.status).toBe("ok");
    expect(r.output.map((o) => o.text).join("")).toContain("done");
    expect(r.displays).toHaveLength(32);
    expect(r.displays.map((d) => d.seq)).toEqual([...Array(32).keys()]);
    expect(r.displays_dropped).toBe(968);
    const next = await host.execute("display('next cell')");
    expect(next.displays.map((d) => d.text)).toEqual(["'next cell'"]);
  }, 120_000);
});
