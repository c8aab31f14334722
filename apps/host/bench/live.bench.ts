// pnpm bench (apps/host): C16 live output through the host and its control socket, in one run.
// First byte: from a cell's print (its wall clock) to a control client's read (this process's wall
// clock). Memory: a 200 MiB print streamed to a client, host and worker peak RSS growth. Round
// trip: host.execute('1+1') on a host with live output against one without.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { ControlClient } from "../src/control/client";
import { serveControl } from "../src/control/server";
import { Host } from "../src/runtime/host";
import { ms, percentile as pct } from "./figures";

const MiB = 1024 * 1024;
const peakRss = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
const line = (name: string, value: string, note = "") => console.log(`${name.padEnd(46)} ${value.padEnd(24)} ${note}`);

async function withHost<T>(liveOutput: boolean, fn: (host: Host) => Promise<T>): Promise<T> {
  const dataDir = mkdtempSync("/tmp/klbr-lb-");
  const workspace = mkdtempSync("/tmp/klbr-lbw-");
  const host = await Host.start({ dataDir, workspace, liveOutput });
  try {
    return await fn(host);
  } finally {
    await host.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(workspace, { recursive: true, force: true });
  }
}

// 1+1 through the host, with and without live output, interleaved in one run.
{
  const dataA = mkdtempSync("/tmp/klbr-lb-");
  const dataB = mkdtempSync("/tmp/klbr-lb-");
  const ws = mkdtempSync("/tmp/klbr-lbw-");
  const [on, off] = await Promise.all([Host.start({ dataDir: dataA, workspace: ws, liveOutput: true }), Host.start({ dataDir: dataB, workspace: ws, liveOutput: false })]);
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < 800; i++) {
    let t = performance.now();
    await on.execute("1+1");
    if (i >= 100) a.push(performance.now() - t);
    t = performance.now();
    await off.execute("1+1");
    if (i >= 100) b.push(performance.now() - t);
  }
  await Promise.all([on.stop(), off.stop()]);
  for (const d of [dataA, dataB, ws]) rmSync(d, { recursive: true, force: true });
  line("host.execute('1+1') with live output p50", ms(pct(a, 50)), `without ${ms(pct(b, 50))}: x${(pct(a, 50) / pct(b, 50)).toFixed(3)} (target <= x1.05)`);
}

await withHost(true, async (host) => {
  const server = await serveControl(host, host.layout.controlSocket, host.liveOutput ?? undefined);
  const client = await ControlClient.connect(host.layout.controlSocket);
  // First byte: 60 prints 60 ms apart, each its own message (the pacing allows one per 50 ms).
  const lags: number[] = [];
  client.listen((event) => {
    const e = event as { type?: string; text?: string };
    if (e.type !== "output" || !e.text) return;
    const wall = (performance.timeOrigin + performance.now()) / 1000;
    for (const text of e.text.split("\n")) if (text.startsWith("t=")) lags.push((wall - Number(text.slice(2))) * 1000);
  });
  await client.request({ op: "exec", code: "import time\nfor _ in range(60):\n    print(f't={time.time()!r}')\n    time.sleep(0.06)", execution_id: "ex-first-byte", live: true });
  line("live output: print to client read p50", ms(pct(lags, 50)), `p99 ${ms(pct(lags, 99))}, ${lags.length} lines (target p50 <= 60 ms)`);

  // 200 MiB print streamed to a client.
  const pid = ((await host.status()) as { workbenches: Array<{ session_id: string; pid: number }> }).workbenches.find((w) => w.session_id === "root")!.pid;
  await host.execute("chunk = 'x' * (64 * 1024 - 1)");
  const workerBefore = peakRss(pid);
  const hostBefore = process.memoryUsage().rss;
  let hostPeak = hostBefore;
  const timer = setInterval(() => (hostPeak = Math.max(hostPeak, process.memoryUsage().rss)), 2);
  let messages = 0;
  let dropped = 0;
  client.listen((event) => {
    const e = event as { type?: string; execution_id?: string; dropped_bytes?: number };
    if (e.type === "output" && e.execution_id === "ex-200") {
      messages++;
      dropped += e.dropped_bytes ?? 0;
    }
  });
  const t = performance.now();
  await client.request({ op: "exec", code: "for _ in range(3200):\n    print(chunk)", execution_id: "ex-200", live: true });
  const seconds = (performance.now() - t) / 1000;
  clearInterval(timer);
  hostPeak = Math.max(hostPeak, process.memoryUsage().rss);
  line("200 MiB print streamed: host RSS growth", `${((hostPeak - hostBefore) / MiB).toFixed(1)} MiB`, "(target <= 32 MiB)");
  line("200 MiB print streamed: worker RSS growth", `${((peakRss(pid) - workerBefore) / MiB).toFixed(1)} MiB`, "(target <= 32 MiB)");
  line("200 MiB print streamed: pace", `${messages} messages in ${seconds.toFixed(2)} s`, `${(dropped / MiB).toFixed(1)} MiB dropped (counted), <= 20/s`);
  client.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});
