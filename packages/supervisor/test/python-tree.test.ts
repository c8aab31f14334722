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

describe("a worker that dies on its own", () => {
  it("takes the children left in its process group with it", async () => {
    const worker = await startPython();
    const done = await worker.execute("import subprocess, os\np = subprocess.Popen(['sleep', '1000'])\nos.write(2, b'child %d\\n' % p.pid)\nos._exit(3)");
    expect(done).toMatchObject({ kind: "failed", reason: "worker_exited", exit: { code: 3 } });
    const child = Number(/child (\d+)/.exec(worker.stderrTail)?.[1]);
    expect(child).toBeGreaterThan(0);
    await worker.exited;
    expect(noneAlive([child])).toBe(true);
  });
});
