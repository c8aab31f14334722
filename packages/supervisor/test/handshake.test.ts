import { describe, expect, it } from "vitest";
import { trackedWorkers } from "../src/exit-hook.js";
import { readProc } from "../src/tree.js";
import { isSupervisorError, type SupervisorError } from "../src/index.js";
import { exists, loggedPid, noneAlive, sleep, startFake, waitFor } from "./helpers.js";

async function failure(promise: Promise<unknown>): Promise<SupervisorError> {
  try {
    await promise;
  } catch (err) {
    if (isSupervisorError(err)) return err;
    throw err;
  }
  throw new Error("expected startWorker to fail");
}

describe("handshake", () => {
  it("a good hello makes a ready worker, the socket is unlinked and the dir goes with the worker", async () => {
    let dir = "";
    const worker = await startFake("requests", { materialize: (d) => void (dir = d) });
    expect(worker.state).toBe("ready");
    // Tracked by the process spawned for it: the guard whose one child is the worker command.
    const guard = readProc(worker.pid)!.ppid;
    expect(trackedWorkers()).toContain(guard);
    expect(worker.hello).toMatchObject({ kind: "hello", role: "workbench", revision: null, slots: [] });
    expect(exists(dir)).toBe(true);
    expect(exists(`${dir}/w.sock`)).toBe(false);
    const exit = await worker.shutdown();
    expect(exit).toMatchObject({ code: 0, reason: "shutdown" });
    expect(worker.state).toBe("dead");
    expect(exists(dir)).toBe(false);
    // The host's exit hook forgets it: nothing is killed by this pid at host exit.
    expect(trackedWorkers()).not.toContain(guard);
  });

  it("a wrong token is WORKER_BAD_TOKEN; the process is stopped and the dir removed", async () => {
    let dir = "";
    const err = await failure(startFake("wrong-token", { materialize: (d) => void (dir = d) }));
    expect(err.code).toBe("WORKER_BAD_TOKEN");
    expect(noneAlive([loggedPid(err.tails!.stderr)])).toBe(true);
    expect(trackedWorkers()).not.toContain(loggedPid(err.tails!.stderr));
    expect(exists(dir)).toBe(false);
  });

  it("no hello within the handshake timeout is WORKER_HANDSHAKE_TIMEOUT (retryable)", async () => {
    const err = await failure(startFake("no-hello", { handshakeTimeoutMs: 1500 }));
    expect(err.code).toBe("WORKER_HANDSHAKE_TIMEOUT");
    expect(err.retryable).toBe(true);
    expect(noneAlive([loggedPid(err.tails!.stderr)])).toBe(true);
  });

  it("a hello of the other role is WORKER_BAD_HELLO", async () => {
    const err = await failure(
      startFake("bad-hello", { env: { FAKE_HELLO: JSON.stringify({ role: "hooks", revision: "a".repeat(64), slots: ["attention.plan", "delivery.review"] }) } }),
    );
    expect(err.code).toBe("WORKER_BAD_HELLO");
    expect(err.message).toContain("hooks");
  });

  it("a revision or skills different from the expected one is WORKER_BAD_HELLO", async () => {
    const rev = await failure(startFake("bad-hello", { role: "hooks", expect: { revision: "b".repeat(64) } }));
    expect(rev.code).toBe("WORKER_BAD_HELLO");
    expect(rev.message).toContain("a".repeat(64));
    const skills = await failure(startFake("bad-hello", { expect: { skills: "c".repeat(64) } }));
    expect(skills.code).toBe("WORKER_BAD_HELLO");
  });

  it("a worker that exits before hello is WORKER_EXITED_EARLY with its stderr", async () => {
    const err = await failure(startFake("no-hello", { command: [process.execPath, "-e", "console.error('boom at import'); process.exit(4)", "--"] }));
    expect(err.code).toBe("WORKER_EXITED_EARLY");
    expect(err.message).toContain("code 4");
    expect(err.tails?.stderr).toContain("boom at import");
  });

  it("a worker that closes its connection and exits a little later is WORKER_EXITED_EARLY with its code", async () => {
    const err = await failure(startFake("close-then-exit"));
    expect(err.code).toBe("WORKER_EXITED_EARLY");
    expect(err.message).toContain("code 6");
  });

  it("a worker that closes its connection and lingers is WORKER_PROTOCOL, and is killed", async () => {
    const err = await failure(startFake("close-then-exit", { env: { FAKE_STAY: "1" }, handshakeTimeoutMs: 30_000 }));
    expect(err.code).toBe("WORKER_PROTOCOL");
    expect(noneAlive([loggedPid(err.tails!.stderr)])).toBe(true);
  });

  it("a command that cannot be spawned is WORKER_SPAWN_FAILED", async () => {
    const err = await failure(startFake("no-hello", { command: ["/nonexistent/klbr-python"] }));
    expect(err.code).toBe("WORKER_SPAWN_FAILED");
    expect(err.message).toContain("/nonexistent/klbr-python");
  });

  it("a second connection is dropped; the first one carries on", async () => {
    const worker = await startFake("two-connections");
    // The fake's stderr is read apart from its socket: the line may come after the hello.
    expect(await waitFor(() => worker.stderrTail.includes("second-closed"))).toBe(true);
    const done = await worker.execute("hi");
    expect(done).toMatchObject({ kind: "cell", status: "ok", output: [{ stream: "result", text: "hi" }], source: "worker", endedBy: "worker" });
    await worker.shutdown();
  });

  it("refuses invalid session ids before spawning anything", async () => {
    const err = await failure(startFake("requests", { sessionId: "no spaces" }));
    expect(err.code).toBe("WORKER_INVALID_ARGUMENT");
    await sleep(0);
  });
});

describe("private directory placement", () => {
  it("a temp dir so deep the socket path would not fit is WORKER_SOCKET_PATH_TOO_LONG, before anything is spawned", async () => {
    const { mkdtempSync, mkdirSync, readdirSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const base = mkdtempSync(`${tmpdir()}/klbr-deep-`);
    const deep = `${base}/${"d".repeat(100)}`;
    mkdirSync(deep);
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = deep;
    try {
      const err = await failure(startFake("requests"));
      expect(err.code).toBe("WORKER_SOCKET_PATH_TOO_LONG");
      expect(err.message).toContain(deep);
      expect(readdirSync(deep)).toEqual([]);
    } finally {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      rmSync(base, { recursive: true, force: true });
    }
  });
});
