// The worker-level cases of the remote namespace over a real sshd: live output, interrupts, kills,
// the keeper's SIGINT rung and the hard stop. Split from remote.test.ts so `pnpm mutate remote` can
// leave these slow cases out of its per-mutant runs (packages/remote/vitest.stryker.config.ts);
// `pnpm test` runs both files.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isLive } from "../../../test-support/sshd.js";
import {
  collectRuntime,
  ensureRuntime,
  installScript,
  isRemoteError,
  parseTarget,
  startRemoteWorker,
  type RemoteWorker,
  type Target,
} from "../src/index.js";
import { PYTHON_DIR, until, useTestSshd } from "./support.js";

const sshd = await useTestSshd();

let seq = 0;

describe.skipIf(!sshd)("remote workers over a real sshd on loopback: signals and kills", () => {
  const bundle = collectRuntime(PYTHON_DIR);
  const script = installScript(PYTHON_DIR);
  const target = (): Target => parseTarget(sshd!.target("loop", `${sshd!.dir}/w${++seq}`));

  const started: RemoteWorker[] = [];
  afterEach(async () => {
    // A failed test must not leave its worker to fail the next one's "nothing left" check.
    await Promise.all(started.splice(0).map((r) => r.worker.hardStop("test_cleanup")));
  });

  async function start(t: Target = target(), liveOutput = false): Promise<RemoteWorker> {
    const runtime = await ensureRuntime(t, bundle, script);
    const remote = await startRemoteWorker({ target: t, runtime, sessionId: "root", generation: `rg-${seq}`, interruptGraceMs: 300, sigintGraceMs: 2000, liveOutput });
    started.push(remote);
    return remote;
  }

  /** Nothing of the remote worker is left: its pid, and any process under the test sshd. */
  async function nothingLeft(remote: RemoteWorker): Promise<void> {
    await remote.worker.exited;
    expect(await until(() => !isLive(remote.remotePid))).toBe(true);
    expect(await until(() => sshd!.descendants().length === 0)).toBe(true);
  }

  it("a remote cell streams its output (C16) through the forward while it runs", async () => {
    const remote = await start(target(), true);
    const seen: Array<{ seq: number; stream: string; text: string }> = [];
    const gate = `${sshd!.dir}/go-${seq}`;
    const cell = remote.worker.execute(
      `import os, sys, time\nprint('remote line 1')\nprint('remote err', file=sys.stderr)\nwhile not os.path.exists(${JSON.stringify(gate)}):\n    time.sleep(0.005)\nprint('remote line 2')`,
      { onOutput: (o) => seen.push({ seq: o.seq, stream: o.stream, text: o.text }) },
    );
    // The cell waits for a file only this test creates, after it saw the cell's first lines.
    expect(await until(() => seen.map((o) => o.text).join("").includes("remote err"))).toBe(true);
    mkdirSync(gate);
    expect(await cell).toMatchObject({ kind: "cell", status: "ok", output: [{ stream: "stdout", text: "remote line 1\n" }, { stream: "stderr" }, { stream: "stdout", text: "remote line 2\n" }] });
    expect(seen).toEqual([
      { seq: 0, stream: "stdout", text: "remote line 1\n" },
      { seq: 1, stream: "stderr", text: "remote err\n" },
      { seq: 2, stream: "stdout", text: "remote line 2\n" },
    ]);
    await remote.worker.shutdown();
    await nothingLeft(remote);
  });

  it("runs cells with state kept, interrupts a busy loop, and closes leaving nothing", async () => {
    const remote = await start();
    expect(remote.remotePid).toBeGreaterThan(1);
    expect(remote.remotePid).not.toBe(remote.worker.pid);
    const first = await remote.worker.execute("import os\nx = 41\nos.getpid()");
    expect(first).toMatchObject({ kind: "cell", status: "ok", output: [{ stream: "result", text: String(remote.remotePid) }] });
    const second = await remote.worker.execute("x + 1");
    expect(second).toMatchObject({ status: "ok", output: [{ stream: "result", text: "42" }] });
    const busy = remote.worker.execute("while True:\n    pass", { id: "busy-1" });
    await new Promise((r) => setTimeout(r, 200));
    const outcome = await remote.worker.interrupt("busy-1");
    // The worker turns the interrupt message into KeyboardInterrupt itself; the keeper's SIGINT
    // is the next rung, for code the message cannot reach.
    expect(["message", "sigint"]).toContain(outcome.rung);
    expect(await busy).toMatchObject({ kind: "cell", status: "interrupted" });
    expect(await remote.worker.execute("x")).toMatchObject({ status: "ok", output: [{ text: "41" }] });
    const exit = await remote.worker.shutdown();
    expect(exit.reason).toBe("shutdown");
    await nothingLeft(remote);
  });

  it("killing the local ssh invalidates the generation and the remote tree goes with it", async () => {
    const remote = await start();
    const escapee = await remote.worker.execute("import subprocess\nsubprocess.Popen(['sleep', '600'], start_new_session=True).pid");
    const grandchild = Number((escapee as { output: Array<{ text: string }> }).output[0]!.text);
    expect(isLive(grandchild)).toBe(true);
    const running = remote.worker.execute("import time\ntime.sleep(600)");
    process.kill(remote.worker.pid, "SIGKILL");
    expect(await running).toMatchObject({ kind: "failed", source: "host" });
    expect((await remote.worker.exited).reason).toBe("worker_exited");
    await nothingLeft(remote);
    expect(isLive(grandchild)).toBe(false);
  });

  it("killing sshd's session drops the connection: invalidated, nothing left", async () => {
    const remote = await start();
    const session = sshd!.sessionOf(remote.remotePid);
    expect(session).not.toBeNull();
    const running = remote.worker.execute("import time\ntime.sleep(600)");
    process.kill(session!, "SIGKILL");
    expect(await running).toMatchObject({ kind: "failed", source: "host" });
    await nothingLeft(remote);
  });

  it("kill -9 of the remote worker ends the generation and leaves nothing", async () => {
    const remote = await start();
    const running = remote.worker.execute("import time\ntime.sleep(600)");
    process.kill(remote.remotePid, "SIGKILL");
    expect(await running).toMatchObject({ kind: "failed", source: "host", reason: "worker_exited" });
    await nothingLeft(remote);
  });

  it("the SIGINT rung reaches a cell that ignores the interrupt message, through the keeper", async () => {
    const remote = await start();
    // The cell swallows the first KeyboardInterrupt (the message rung's) and keeps going; the
    // second one (SIGINT through the keeper's "int" line) ends it.
    // It says when it sits in the first loop: interrupted before, it would end at the message rung.
    const inLoop = join(tmpdir(), `klbr-rcp-${process.pid}-${randomBytes(6).toString("hex")}`);
    const code = `import time\ntry:\n    open(${JSON.stringify(inLoop)}, 'w').close()\n    while True: time.sleep(0.01)\nexcept KeyboardInterrupt:\n    pass\nwhile True: time.sleep(0.01)`;
    const cell = remote.worker.execute(code, { id: "stubborn" });
    expect(await until(() => existsSync(inLoop))).toBe(true);
    rmSync(inLoop, { force: true });
    const outcome = await remote.worker.interrupt("stubborn");
    expect(outcome.rung).toBe("sigint");
    expect(await cell).toMatchObject({ kind: "cell", status: "interrupted" });
    expect(await remote.worker.execute("1 + 1")).toMatchObject({ status: "ok", output: [{ text: "2" }] });
  });

  it("a cell that ignores the message and SIGINT is hard-stopped: the remote tree goes with the generation", async () => {
    const remote = await start();
    const grandchild = Number(
      ((await remote.worker.execute("import subprocess\nsubprocess.Popen(['sleep', '600'], start_new_session=True).pid")) as { output: Array<{ text: string }> }).output[0]!.text,
    );
    // It says once SIGINT is ignored: interrupted before, it would end at the message rung.
    const deaf = join(tmpdir(), `klbr-rcp-${process.pid}-${randomBytes(6).toString("hex")}`);
    const code = `import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nopen(${JSON.stringify(deaf)}, 'w').close()\nwhile True:\n    pass`;
    const cell = remote.worker.execute(code, { id: "deaf" });
    expect(await until(() => existsSync(deaf))).toBe(true);
    rmSync(deaf, { force: true });
    const outcome = await remote.worker.interrupt("deaf");
    expect(outcome.rung).toBe("hard_stop");
    expect(await cell).toMatchObject({ kind: "cell", status: "interrupted", source: "host", rung: "hard_stop" });
    await nothingLeft(remote);
    expect(isLive(grandchild)).toBe(false);
  });
});
