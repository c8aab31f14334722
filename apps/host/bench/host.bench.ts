// pnpm bench (apps/host): the whole `klbr exec '1+1'` command against a running daemon, the
// in-process execute round trip through the host, and the supervisor's raw round trip as the
// baseline, all measured in this one run.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolvePython, startWorker } from "@klbr/supervisor";
import { defaultPythonDir } from "../src/paths";
import { Host } from "../src/runtime/host";
import { percentile } from "./figures";

const HOST_DIR = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(HOST_DIR, "bin", "klbr.js");

async function time(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < Math.min(20, n); i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return samples.sort((a, b) => a - b);
}

function line(name: string, s: number[], base?: number[]): void {
  const p50 = percentile(s, 50);
  const ratio = base ? `  ${(p50 / percentile(base, 50)).toFixed(2)}x baseline p50` : "";
  console.log(`${name.padEnd(44)} p50 ${p50.toFixed(3)} ms  p99 ${percentile(s, 99).toFixed(3)} ms${ratio}`);
}

const baselineWorker = await startWorker({
  role: "workbench",
  sessionId: "root",
  generation: "g-bench",
  command: [resolvePython(), "-m", "klbr.worker"],
  pythonPath: [defaultPythonDir()],
});
const raw = await time(500, () => baselineWorker.execute("1+1"));
await baselineWorker.shutdown();

const dataDir = mkdtempSync("/tmp/klbr-b-");
const workspace = mkdtempSync("/tmp/klbr-bw-");
const host = await Host.start({ dataDir, workspace });
const inProcess = await time(500, () => host.execute("1+1"));
await host.stop();

line("baseline: supervisor execute('1+1')", raw);
line("host.execute('1+1') (durable log included)", inProcess, raw);

if (!existsSync(join(HOST_DIR, "dist", "cli.js"))) {
  console.log("whole command: skipped, run `pnpm build` first (the bin runs dist/)");
} else {
  const daemon = spawn(process.execPath, [BIN, "--data-dir", dataDir, "serve"], { stdio: ["ignore", "ignore", "pipe"] });
  await new Promise<void>((resolve) => daemon.stderr!.on("data", (c: Buffer) => c.toString().includes("serving") && resolve()));
  const whole = await time(30, async () => spawnSync(process.execPath, [BIN, "--data-dir", dataDir, "exec", "1+1"]));
  const nodeStart = await time(30, async () => spawnSync(process.execPath, ["-e", "0"]));
  line("node -e 0 (process start floor)", nodeStart);
  line("klbr exec '1+1' against the daemon (whole command)", whole, raw);
  daemon.kill("SIGTERM");
  await new Promise((r) => daemon.once("exit", r));
}
rmSync(dataDir, { recursive: true, force: true });
rmSync(workspace, { recursive: true, force: true });
console.log(`python: ${resolvePython()}`);
