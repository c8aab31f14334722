// pnpm bench (apps/host): `klbr mcp` (C22) against the control socket it is a client of, in one run
// on one daemon (the built bin). Round trip: `1+1` as a tools/call from the TS SDK Client over
// stdio, against the exec request `klbr exec` sends over the control socket, interleaved; the
// overhead is the difference of the p50s. First progress: from a cell's print (its wall clock) to
// the client's notifications/progress (this process's wall clock).
import { mkdtempSync, rmSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ControlClient } from "../src/control/client";
import { BIN, startDaemon } from "./daemon";
import { ms, percentile as pct } from "./figures";

const line = (name: string, value: string, note = "") => console.log(`${name.padEnd(52)} ${value.padEnd(14)} ${note}`);
const wall = () => (performance.timeOrigin + performance.now()) / 1000;

const dataDir = mkdtempSync("/tmp/klbr-mb-");
const workspace = mkdtempSync("/tmp/klbr-mbw-");
const daemon = await startDaemon(dataDir, ["--workspace", workspace]);
const control = await ControlClient.connect(`${dataDir}/klbr.sock`);
const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "--data-dir", dataDir, "--workspace", workspace, "mcp", "--session", "bench-mcp"], stderr: "ignore" });
const client = new Client({ name: "klbr-bench", version: "0" });
try {
  await client.connect(transport);
  // Both in sessions of their own, warm, on the same daemon.
  await client.callTool({ name: "python", arguments: { code: "1+1" } });
  await control.request({ op: "exec", code: "1+1", session: "bench-exec", execution_id: "ex-warm", live: true });

  const viaMcp: number[] = [];
  const viaExec: number[] = [];
  for (let i = 0; i < 700; i++) {
    let t = performance.now();
    await client.callTool({ name: "python", arguments: { code: "1+1" } });
    if (i >= 100) viaMcp.push(performance.now() - t);
    t = performance.now();
    await control.request({ op: "exec", code: "1+1", session: "bench-exec", execution_id: `ex-b${i}`, live: true });
    if (i >= 100) viaExec.push(performance.now() - t);
  }
  const overhead = pct(viaMcp, 50) - pct(viaExec, 50);
  line("'1+1' via klbr mcp (stdio, TS SDK Client) p50", ms(pct(viaMcp, 50)), `p99 ${ms(pct(viaMcp, 99))}`);
  line("'1+1' via the control socket (klbr exec's request) p50", ms(pct(viaExec, 50)), `p99 ${ms(pct(viaExec, 99))}`);
  line("klbr mcp overhead at p50", ms(overhead), `x${(pct(viaMcp, 50) / pct(viaExec, 50)).toFixed(3)} (target <= 1 ms)`);

  // First progress notification of a printing cell: 40 cells, each prints once after a pause.
  const lags: number[] = [];
  for (let i = 0; i < 40; i++) {
    let first: number | null = null;
    await client.callTool({ name: "python", arguments: { code: "import time\ntime.sleep(0.05)\nprint(f't={time.time()!r}', flush=True)\ntime.sleep(0.1)" } }, undefined, {
      onprogress: (p) => {
        if (first !== null || !p.message?.startsWith("t=")) return;
        first = (wall() - Number(p.message.slice(2))) * 1000;
      },
    });
    if (first !== null) lags.push(first);
  }
  line("first progress notification after the print p50", ms(pct(lags, 50)), `p99 ${ms(pct(lags, 99))}, ${lags.length}/40 cells (target <= 60 ms)`);
} finally {
  await client.close().catch(() => undefined);
  control.close();
  await new Promise<void>((resolve) => {
    daemon.once("exit", () => resolve());
    daemon.kill("SIGTERM");
  });
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
}
