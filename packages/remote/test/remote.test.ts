import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isLive } from "../../../test-support/sshd.js";
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
  type RuntimeBundle,
  type Target,
} from "../src/index.js";
import { PYTHON_DIR, until, useTestSshd } from "./support.js";

const sshd = await useTestSshd();

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
  // Read per test (beforeEach), not while vitest collects: code run at collection makes every
  // mutant it reaches "static" for `pnpm mutate remote` (the whole suite re-run per mutant).
  let bundle: RuntimeBundle;
  let script: string;
  beforeEach(() => {
    bundle = collectRuntime(PYTHON_DIR);
    script = installScript(PYTHON_DIR);
  });
  const target = (): Target => parseTarget(sshd!.target("loop", `${sshd!.dir}/w${++seq}`));

  const started: RemoteWorker[] = [];
  afterEach(async () => {
    // A failed test must not leave its worker to fail the next one's "nothing left" check.
    await Promise.all(started.splice(0).map((r) => r.worker.hardStop("test_cleanup")));
  });

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
