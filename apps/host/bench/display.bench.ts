// pnpm bench (apps/host): C20 displays through the host, ratios in one run (no timed asserts).
// 1. plt.show() of a 640x480 matplotlib figure until the host stored its blobs (the live display
//    event is published once the transaction committed), against savefig alone of the same figure
//    in the same worker. Python's time.monotonic_ns and Node's hrtime read the same clock.
// 2. 200 cells each showing one distinct 100 KiB image: the database's growth against the image
//    bytes; then 200 cells showing one same image (dedup by digest); host RSS along the way.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Host } from "../src/runtime/host";
import { ms, percentile as pct } from "./figures";

const KiB = 1024;
const MiB = 1024 * KiB;
const line = (name: string, value: string, note = "") => console.log(`${name.padEnd(52)} ${value.padEnd(18)} ${note}`);

function stdout(report: Awaited<ReturnType<Host["execute"]>>): string {
  if (report.status !== "ok") throw new Error(JSON.stringify(report));
  return report.output.filter((o) => o.stream === "stdout").map((o) => o.text).join("");
}

async function withHost<T>(fn: (host: Host) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync("/tmp/klbr-db-");
  const workspace = mkdtempSync("/tmp/klbr-dbw-");
  const host = await Host.start({ dataDir, workspace });
  try {
    return await fn(host);
  } finally {
    await host.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}

/** The database's size in bytes with everything checkpointed into the main file. */
function databaseBytes(host: Host): number {
  host.sqlite.pragma("wal_checkpoint(TRUNCATE)");
  const pages = host.sqlite.pragma("page_count", { simple: true }) as number;
  const free = host.sqlite.pragma("freelist_count", { simple: true }) as number;
  const size = host.sqlite.pragma("page_size", { simple: true }) as number;
  return (pages - free) * size;
}

let matplotlib = true;
try {
  execFileSync(process.env.KLBR_PYTHON ?? "python3", ["-c", "import matplotlib"], { stdio: "ignore" });
} catch {
  matplotlib = false;
}

if (!matplotlib || process.env.KLBR_BENCH_SKIP_PLOT === "1") {
  line("plt.show() 640x480 to the stored blob", matplotlib ? "skipped: KLBR_BENCH_SKIP_PLOT=1" : "skipped: no matplotlib (python/requirements-test.txt)");
} else {
  await withHost(async (host) => {
    stdout(await host.execute("import io, time\nimport matplotlib.pyplot as plt\nprint()"));
    let stored = 0n;
    const stop = host.liveOutput!.watch({}, () => undefined, () => void (stored = process.hrtime.bigint()));
    const figure = "fig = plt.figure(figsize=(6.4, 4.8))\nplt.plot(range(100), [i * i for i in range(100)])\n";
    const alone: number[] = [];
    const shown: number[] = [];
    for (let i = 0; i < 45; i++) {
      const a = await host.execute(`${figure}t = time.perf_counter()\nfig.savefig(io.BytesIO(), format='png', dpi='figure')\nprint((time.perf_counter() - t) * 1000)\nplt.close(fig)`);
      const b = await host.execute(`${figure}print(time.monotonic_ns(), flush=True)\nplt.show()`);
      if (b.displays[0]?.images[0]?.width !== 640) throw new Error(`not a 640x480 plot: ${JSON.stringify(b.displays)}`);
      if (i < 5) continue; // warm-up
      alone.push(Number(stdout(a)));
      shown.push(Number(stored - BigInt(stdout(b).trim())) / 1e6);
    }
    stop();
    const ratio = pct(shown, 50) / pct(alone, 50);
    line("plt.show() 640x480 to the stored blob p50", ms(pct(shown, 50)), `savefig alone ${ms(pct(alone, 50))}: x${ratio.toFixed(3)} (target <= x1.2)`);
  });
}

await withHost(async (host) => {
  // A class whose _repr_png_ gives a PNG signature and random bytes: 100 KiB that do not compress.
  stdout(
    await host.execute(
      [
        "import os",
        "class Blob:",
        "    def __init__(self, data): self.data = data",
        "    def _repr_png_(self): return self.data",
        "    def __repr__(self): return 'Blob()'",
        "def fresh(): return Blob(b'\\x89PNG\\r\\n\\x1a\\n' + os.urandom(100 * 1024 - 8))",
        "same = fresh()",
        "print()",
      ].join("\n"),
    ),
  );
  const rss: number[] = [];
  const heap: number[] = [];
  const gc = (globalThis as { gc?: () => void }).gc;
  /** RSS now, and the heap after a full GC (when exposed) at the first and last sample: retained, not merely allocated. */
  const sample = () => {
    if (gc && (heap.length === 0 || rss.length === 4)) {
      gc();
      heap.push(process.memoryUsage().heapUsed);
    }
    return process.memoryUsage().rss;
  };
  const before = databaseBytes(host);
  for (let i = 0; i < 200; i++) {
    const r = await host.execute("display(fresh())");
    if (r.displays[0]?.images[0]?.bytes !== 100 * KiB) throw new Error(JSON.stringify(r.displays));
    if (i % 50 === 49) rss.push(sample());
  }
  const grown = databaseBytes(host) - before;
  const images = 200 * 100 * KiB;
  line("200 cells x 100 KiB distinct images: DB growth", `${(grown / MiB).toFixed(2)} MiB`, `image bytes ${(images / MiB).toFixed(2)} MiB: x${(grown / images).toFixed(3)} (target <= x1.05)`);
  const beforeSame = databaseBytes(host);
  for (let i = 0; i < 200; i++) await host.execute("display(same)");
  const grownSame = databaseBytes(host) - beforeSame;
  line("200 cells x the same 100 KiB image: DB growth", `${(grownSame / KiB).toFixed(1)} KiB`, `x${(grownSame / images).toFixed(4)} of 200 copies; x${(grownSame / (100 * KiB)).toFixed(2)} of one image (stored once)`);
  rss.push(sample());
  line("host RSS at cells 50, 100, 150, 200, 400", rss.map((v) => `${(v / MiB).toFixed(0)}`).join(", ") + " MiB", `growth 50 -> 400: ${((rss.at(-1)! - rss[0]!) / MiB).toFixed(1)} MiB`);
  line("host JS heap after GC at cells 50 and 400", heap.map((v) => `${(v / MiB).toFixed(1)}`).join(", ") + " MiB", gc ? "" : "(run with --expose-gc for this line)");
});
