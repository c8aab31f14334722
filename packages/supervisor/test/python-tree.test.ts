import { describe, expect, it } from "vitest";
import type { Worker } from "../src/index.js";
import { noneAlive, startPython } from "./helpers.js";
import { isAlive } from "../src/tree.js";

const SPAWN = [
  "import subprocess",
  "a = subprocess.Popen(['sleep', '1000'])",
  "b = subprocess.Popen(['sleep', '1000'], start_new_session=True)",
  "c = subprocess.Popen(['sh', '-c', 'setsid sleep 1000 & sleep 1000 & wait'])",
  "[a.pid, b.pid, c.pid]",
].join("\n");

async function spawned(worker: Worker): Promise<number[]> {
  const done = await worker.execute(SPAWN);
  if (done.kind !== "cell" || done.status !== "ok") throw new Error(JSON.stringify(done));
  const pids = JSON.parse(done.output.at(-1)!.text) as number[];
  for (const pid of pids) expect(isAlive(pid)).toBe(true);
  return pids;
}

describe("no descendant outlives its worker", () => {
  it("after shutdown", async () => {
    const worker = await startPython();
    const pids = await spawned(worker);
    await worker.shutdown();
    expect(noneAlive(pids)).toBe(true);
  });

  it("after a hard stop while a cell still runs", async () => {
    const worker = await startPython();
    const pids = await spawned(worker);
    const running = worker.execute("import time\ntime.sleep(100)");
    const exit = await worker.hardStop("test");
    expect(exit).toMatchObject({ reason: "test", signal: "SIGKILL" });
    expect(noneAlive([worker.pid, ...pids])).toBe(true);
    expect(await running).toMatchObject({ kind: "cell", status: "interrupted", source: "host", reason: "test" });
  });
});
