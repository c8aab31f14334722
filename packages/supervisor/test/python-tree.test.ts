import { describe, expect, it } from "vitest";
import type { Worker } from "../src/index.js";
import { environValue, killAlive, noneAlive, startPython, startSleep, waitFor } from "./helpers.js";
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
    // The worker's stderr is read apart from its exit and its socket: wait for the line.
    expect(await waitFor(() => /child \d+\n/.test(worker.stderrTail))).toBe(true);
    const child = Number(/child (\d+)/.exec(worker.stderrTail)?.[1]);
    expect(child).toBeGreaterThan(0);
    await worker.exited;
    expect(noneAlive([child])).toBe(true);
  });
});

// A grandchild in its own session and group, which the cell reports on stderr before going on.
// It keeps copies of the worker's sockets, so the host learns of the worker's death from the
// process exit, after the kernel handed the grandchild to init: an EOF seen while the worker is
// still exiting would let the tree walk catch it (it did 9 times in 10), hiding what is tested.
const ESCAPE = [
  "import os, subprocess",
  "def sockets():",
  "    for fd in os.listdir('/proc/self/fd'):",
  "        try:",
  "            if os.readlink('/proc/self/fd/' + fd).startswith('socket:'): yield int(fd)",
  "        except OSError: pass",
  "p = subprocess.Popen(['sleep', '1000'], start_new_session=True, pass_fds=list(sockets()))",
  "os.write(2, b'escaped %d %d\\n' % (p.pid, os.getpgid(p.pid)))",
].join("\n");

/**
 * The pid of the grandchild ESCAPE reported, after checking that it leads its own group. Waits for
 * the line: the worker's stderr is a pipe of its own, read apart from the socket, so a cell's
 * completion can arrive first (a busy CI run saw it).
 */
async function escaped(worker: Worker): Promise<number> {
  if (!(await waitFor(() => /escaped \d+ \d+\n/.test(worker.stderrTail)))) throw new Error(`no escaped pid in ${JSON.stringify(worker.stderrTail)}`);
  const m = /escaped (\d+) (\d+)/.exec(worker.stderrTail);
  if (!m) throw new Error(`no escaped pid in ${JSON.stringify(worker.stderrTail)}`);
  expect(m[2]).toBe(m[1]);
  return Number(m[1]);
}

describe("a worker that dies on its own, with a grandchild in its own session", () => {
  it("exiting by itself (os._exit): the cell fails and the grandchild is killed", async () => {
    const worker = await startPython();
    let child = 0;
    try {
      const done = await worker.execute(`${ESCAPE}\nos._exit(1)`);
      expect(done).toMatchObject({ kind: "failed", reason: "worker_exited", exit: { code: 1 } });
      child = await escaped(worker);
      await worker.exited;
      expect(await waitFor(() => !isAlive(child))).toBe(true);
    } finally {
      killAlive([child]);
    }
  });

  it("SIGKILLed from outside while the grandchild runs: the cell fails and the grandchild is killed", async () => {
    const worker = await startPython();
    let child = 0;
    try {
      const running = worker.execute(`${ESCAPE}\nimport time\ntime.sleep(1000)`);
      expect(await waitFor(() => /escaped \d+/.test(worker.stderrTail))).toBe(true);
      child = await escaped(worker);
      expect(isAlive(child)).toBe(true);
      process.kill(worker.pid, "SIGKILL");
      expect(await running).toMatchObject({ kind: "failed", source: "host", exit: { signal: "SIGKILL" } });
      await worker.exited;
      expect(await waitFor(() => !isAlive(child))).toBe(true);
    } finally {
      killAlive([child]);
    }
  });

  it("leaves alone another generation's processes and processes whose tag only looks like it", async () => {
    const dying = await startPython();
    const other = await startPython();
    const tag = environValue(dying.pid, "KLBR_TREE")!;
    expect(tag).toMatch(/^[0-9a-f]{32}$/);
    expect(environValue(other.pid, "KLBR_TREE")).toMatch(/^[0-9a-f]{32}$/);
    expect(environValue(other.pid, "KLBR_TREE")).not.toBe(tag);
    const lookAlikes = [
      startSleep({ KLBR_TREE: `${tag}0` }),
      startSleep({ KLBR_TREE: tag.slice(0, -1) }),
      startSleep({ XKLBR_TREE: tag }),
      startSleep({ OTHER: `KLBR_TREE=${tag}` }),
    ];
    let mine = 0;
    let theirs = 0;
    try {
      await other.execute(ESCAPE);
      theirs = await escaped(other);
      expect(await dying.execute(`${ESCAPE}\nos._exit(1)`)).toMatchObject({ kind: "failed", reason: "worker_exited" });
      mine = await escaped(dying);
      // `exited` settles after the sweep: what is alive now was spared, not missed by a slow kill.
      await dying.exited;
      expect(await waitFor(() => !isAlive(mine))).toBe(true);
      for (const pid of lookAlikes) expect(isAlive(pid)).toBe(true);
      expect(isAlive(theirs)).toBe(true);
      expect(other.state).toBe("ready");
      // and its own end takes its grandchild.
      await other.shutdown();
      expect(await waitFor(() => !isAlive(theirs))).toBe(true);
    } finally {
      await other.shutdown();
      killAlive([...lookAlikes, mine, theirs]);
    }
  });
});
