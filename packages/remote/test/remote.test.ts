import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { isLive, startTestSshd } from "../../../test-support/sshd.js";
import {
  collectRuntime,
  ensureRuntime,
  installScript,
  isRemoteError,
  openRemoteWorker,
  parseTarget,
  probeTarget,
  startRemoteWorker,
  type RemoteWorker,
  type Target,
} from "../src/index.js";

const PYTHON_DIR = fileURLToPath(new URL("../../../python", import.meta.url));
const { sshd, skip } = await startTestSshd();
if (skip) console.warn(skip);

afterAll(async () => {
  await sshd?.stop();
});

/** Poll until `check` holds (bounded generously: this box is shared and loaded). */
async function until(check: () => boolean, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return check();
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isRemoteError(error)) return error.code;
    throw error;
  }
  return "resolved";
}

let seq = 0;

describe.skipIf(!sshd)("remote workers over a real sshd on loopback", () => {
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

  it("target test: connects, reports the remote python and the round trip", async () => {
    const probe = await probeTarget(target());
    expect(probe.python).toMatch(/^3\.\d+\.\d+$/);
    expect(probe.python_ok).toBe(true);
    expect(probe.round_trip_ms).toBeGreaterThan(0);
  });

  it("copies the runtime only when its digest is absent", async () => {
    const t = target();
    const cold = await ensureRuntime(t, bundle, script);
    expect(cold).toMatchObject({ digest: bundle.digest, dir: `${t.workdir}/klbr-${bundle.digest}`, copied: true });
    const warm = await ensureRuntime(t, bundle, script);
    expect(warm.copied).toBe(false);
    rmSync(t.workdir, { recursive: true, force: true });
  });

  it("opens a worker cold (the runtime installed on the way) and warm (one connection, nothing copied)", async () => {
    const t = target();
    const cold = await openRemoteWorker({ target: t, bundle, script, sessionId: "root", generation: "g-cold" });
    started.push(cold.remote);
    expect(cold.runtime).toMatchObject({ digest: bundle.digest, copied: true });
    expect(cold.runtime.python).toMatch(/^3\.\d+\.\d+$/);
    expect(cold.remote.python).toBe(cold.runtime.python);
    await cold.remote.worker.shutdown();
    const warm = await openRemoteWorker({ target: t, bundle, script, sessionId: "root", generation: "g-warm" });
    started.push(warm.remote);
    expect(warm.runtime).toMatchObject({ digest: bundle.digest, copied: false, python: cold.runtime.python });
    expect(await warm.remote.worker.execute("6 * 7")).toMatchObject({ status: "ok", output: [{ text: "42" }] });
    await warm.remote.worker.shutdown();
    await nothingLeft(warm.remote);
  });

  it("a workdir relative to the remote home works (the worker's socket then lives in /tmp)", async () => {
    const relative = `.cache/klbr-test-${process.pid}-${++seq}`;
    const t = parseTarget({ ...sshd!.target("loop"), workdir: relative });
    const sockets = () => readdirSync("/tmp").filter((n) => /^klbr-r-[0-9a-f]{24}\.sock$/.test(n));
    const before = sockets();
    try {
      const { remote, runtime } = await openRemoteWorker({ target: t, bundle, script, sessionId: "root", generation: "g-rel" });
      started.push(remote);
      expect(runtime.copied).toBe(true);
      expect(remote.remoteSocket).toMatch(/^\/tmp\/klbr-r-[0-9a-f]{24}\.sock$/);
      expect(await remote.worker.execute("import klbr, os\n(os.getcwd(), os.path.dirname(os.path.dirname(klbr.__file__)))")).toMatchObject({
        status: "ok",
        output: [{ text: String([join(homedir(), relative), join(homedir(), relative, `klbr-${bundle.digest}`)].map((p) => `'${p}'`).join(", ")).replace(/^/, "(").replace(/$/, ")") }],
      });
      await remote.worker.shutdown();
      await nothingLeft(remote);
      expect(existsSync(remote.remoteSocket)).toBe(false);
      // The first, refused start (no runtime yet) left no socket either.
      expect(sockets().filter((n) => !before.includes(n))).toEqual([]);
    } finally {
      rmSync(join(homedir(), relative), { recursive: true, force: true });
    }
  });

  it("startRemoteWorker without the runtime there is REMOTE_RUNTIME_ABSENT, leaving nothing", async () => {
    const t = target();
    // The work directory exists (else the socket forward fails first), the runtime does not.
    mkdirSync(t.workdir, { recursive: true });
    const dir = `${t.workdir}/klbr-${bundle.digest}`;
    expect(await codeOf(startRemoteWorker({ target: t, runtime: { digest: bundle.digest, dir }, sessionId: "root", generation: "g-x" }))).toBe("REMOTE_RUNTIME_ABSENT");
    expect(readdirSync(t.workdir)).toEqual([]);
    expect(await until(() => sshd!.descendants().length === 0)).toBe(true);
  });

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

  it("a wrong host key is REMOTE_HOST_KEY_MISMATCH before anything runs there", async () => {
    const t = parseTarget({ ...sshd!.target("loop", `${sshd!.dir}/wk`), ssh: { ...sshd!.target("loop").ssh, known_hosts: sshd!.wrongKnownHosts } });
    expect(await codeOf(probeTarget(t))).toBe("REMOTE_HOST_KEY_MISMATCH");
    expect(await codeOf(ensureRuntime(t, bundle, script))).toBe("REMOTE_HOST_KEY_MISMATCH");
    expect(await until(() => sshd!.descendants().length === 0)).toBe(true);
  });

  it("an interpreter that does not exist there is REMOTE_PYTHON_MISSING", async () => {
    const t = parseTarget({ ...sshd!.target("loop", `${sshd!.dir}/wp`), python: "/nonexistent/python3" });
    expect(await codeOf(probeTarget(t))).toBe("REMOTE_PYTHON_MISSING");
    expect(await codeOf(ensureRuntime(t, bundle, script))).toBe("REMOTE_PYTHON_MISSING");
  });
});
