// startRemoteWorker over a stand-in supervisor (startWorker mocked, everything else real): what it
// asks the supervisor for, how it names a start that fails there, and its bounded wait for the
// keeper's pid line. Over the test sshd that line comes at once or never; here it comes when the
// test says, on vitest's fake clock, so the 10 s bound is pinned exactly and nothing sleeps.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { SupervisorError, startWorker, type StartWorkerOptions, type Worker, type WorkerState } from "@klbr/supervisor";
import { isRemoteError } from "./errors.js";
import { sshArgv } from "./ssh-argv.js";
import { openRemoteWorker, remoteWorkerCommand, startRemoteWorker, type RemoteWorkerOptions } from "./start.js";
import { parseTarget } from "./targets.js";

vi.mock("@klbr/supervisor", async (importOriginal) => ({ ...(await importOriginal<typeof import("@klbr/supervisor")>()), startWorker: vi.fn() }));
const startWorkerMock = vi.mocked(startWorker);

const target = () =>
  parseTarget({ name: "one", ssh: { host: "h.example", user: "u", port: 2222, identity_file: "/k/id", known_hosts: "/k/kh" }, python: "/opt/py3", workdir: "/srv/klbr" });
const digest = "d".repeat(64);
const runtime = { digest, dir: `/srv/klbr/klbr-${digest}` };

/** The parts of a Worker startRemoteWorker reads; the test moves them. */
interface FakeWorker {
  stdoutTail: string;
  state: WorkerState;
  hardStop: ReturnType<typeof vi.fn>;
}

function fakeWorker(stdoutTail = ""): FakeWorker {
  const worker: FakeWorker = {
    stdoutTail,
    state: "ready",
    hardStop: vi.fn(async (reason: string) => {
      worker.state = "dead";
      return { reason };
    }),
  };
  return worker;
}

const PID_LINE = "klbr.keeper pid=4242 python=3.12.1\n";

function start(worker: FakeWorker, extra: Partial<RemoteWorkerOptions> = {}) {
  startWorkerMock.mockResolvedValueOnce(worker as unknown as Worker);
  return startRemoteWorker({ target: target(), runtime, sessionId: "root", generation: "g-1", ...extra });
}

/** The options startRemoteWorker gave the supervisor. */
const asked = (): StartWorkerOptions => startWorkerMock.mock.calls.at(-1)![0];

/** Whether `promise` has settled, without waiting for it: "pending", "resolved" or the rejection's "CODE: message". */
function watch(promise: Promise<unknown>): () => string {
  let state = "pending";
  promise.then(
    () => (state = "resolved"),
    (error) => (state = isRemoteError(error) ? `${error.code}: ${error.message}` : `other: ${String(error)}`),
  );
  return () => state;
}

/** Let every queued promise continuation run (a real macrotask turn: only setTimeout is faked). */
const drain = () => new Promise<void>((resolve) => setImmediate(resolve));

beforeEach(() => {
  startWorkerMock.mockReset();
});

describe("startRemoteWorker: what it asks the supervisor for", () => {
  it("a workbench worker running the keeper (python -m klbr.worker --token-stdin), 30 s to say hello, 10 s to shut down, the supervisor's own graces", async () => {
    const worker = fakeWorker(PID_LINE);
    const remote = await start(worker);
    const opts = asked();
    expect(opts.role).toBe("workbench");
    expect(opts.sessionId).toBe("root");
    expect(opts.generation).toBe("g-1");
    expect(opts.command).toEqual(["/opt/py3", "-m", "klbr.worker", "--token-stdin"]);
    expect(opts.handshakeTimeoutMs).toBe(30_000);
    expect(opts.shutdownGraceMs).toBe(10_000);
    expect(opts.interruptGraceMs).toBeUndefined();
    expect(opts.sigintGraceMs).toBeUndefined();
    expect(opts.onStrayHostRequest).toBeUndefined();
    expect(opts.liveOutput).toBeFalsy();
    expect(opts.transport!.socketPath).toMatch(/^\/srv\/klbr\/klbr-r-[0-9a-f]{24}\.sock$/);
    expect(remote).toEqual({ worker, remotePid: 4242, remoteSocket: opts.transport!.socketPath, python: "3.12.1" });
  });

  it("passes the caller's timings, stray-request handler, live output and limits through", async () => {
    const onStrayHostRequest = async () => "stray";
    await start(fakeWorker(PID_LINE), {
      handshakeTimeoutMs: 1234,
      shutdownGraceMs: 2345,
      interruptGraceMs: 300,
      sigintGraceMs: 2000,
      onStrayHostRequest,
      liveOutput: true,
      display: true,
      limits: { procs: 64 },
    });
    const opts = asked();
    expect(opts).toMatchObject({ handshakeTimeoutMs: 1234, shutdownGraceMs: 2345, interruptGraceMs: 300, sigintGraceMs: 2000, liveOutput: true, display: true });
    expect(opts.onStrayHostRequest).toBe(onStrayHostRequest);
    expect(opts.command).toEqual(["/opt/py3", "-m", "klbr.worker", "--token-stdin", "--limits", JSON.stringify({ rlimits: { NPROC: [64, 64] } })]);
  });

  it("wraps the worker's argv in ssh: the remote command, one forward from the remote socket to the local one, the ssh program only when given", async () => {
    await start(fakeWorker(PID_LINE));
    const { socketPath, wrap } = asked().transport!;
    const argv = ["/opt/py3", "-m", "klbr.worker", "--token-stdin", "--socket", socketPath];
    const command = remoteWorkerCommand(target(), runtime, argv, socketPath);
    expect(wrap(argv, "/run/host/w.sock")).toEqual(sshArgv(target(), command, { forward: { remote: socketPath, local: "/run/host/w.sock" } }));
    expect(wrap(argv, "/run/host/w.sock")[0]).toBe("ssh");
    await start(fakeWorker(PID_LINE), { ssh: "/opt/bin/ssh" });
    expect(asked().transport!.wrap(argv, "/run/host/w.sock")[0]).toBe("/opt/bin/ssh");
  });
});

describe("startRemoteWorker: a start the supervisor refuses", () => {
  it("without output tails (refused before anything ran) is REMOTE_START_FAILED with no stderr part", async () => {
    const cause = new SupervisorError("WORKER_SOCKET_PATH_TOO_LONG", "the socket path is too long");
    startWorkerMock.mockRejectedValueOnce(cause);
    const error = await startRemoteWorker({ target: target(), runtime, sessionId: "root", generation: "g-1" }).catch((e: unknown) => e);
    expect(isRemoteError(error) && `${error.code}: ${error.message}`).toBe(
      'REMOTE_START_FAILED: target "one": the worker did not start (WORKER_SOCKET_PATH_TOO_LONG): the socket path is too long',
    );
    expect((error as Error).cause).toBe(cause);
  });

  /** What startRemoteWorker throws when the supervisor refuses with `cause`. */
  async function refused(cause: unknown): Promise<Error> {
    startWorkerMock.mockRejectedValueOnce(cause);
    return startRemoteWorker({ target: target(), runtime, sessionId: "root", generation: "g-1" }).then(
      () => new Error("resolved"),
      (error: Error) => error,
    );
  }

  it("whose stderr says the runtime is absent is REMOTE_RUNTIME_ABSENT naming the directory, the supervisor's error as its cause", async () => {
    const cause = new SupervisorError("WORKER_EXITED_EARLY", "exited 97", { tails: { stdout: "", stderr: "klbr.remote: runtime absent\n" } });
    const error = await refused(cause);
    expect(isRemoteError(error) && `${error.code}: ${error.message}`).toBe(`REMOTE_RUNTIME_ABSENT: target "one": no runtime at /srv/klbr/klbr-${digest}`);
    expect(error.cause).toBe(cause);
  });

  it("with another stderr is REMOTE_START_FAILED ending in the last 500 characters of it, trimmed", async () => {
    const stderr = `${"x".repeat(100)}${"y".repeat(499)}z\n\n`;
    const cause = new SupervisorError("WORKER_EXITED_EARLY", "exited 1", { tails: { stdout: "", stderr } });
    const error = await refused(cause);
    expect(isRemoteError(error) && `${error.code}: ${error.message}`).toBe(
      `REMOTE_START_FAILED: target "one": the worker did not start (WORKER_EXITED_EARLY): exited 1 | stderr: ${"y".repeat(499)}z`,
    );
    expect(error.cause).toBe(cause);
  });

  it("whose stderr is ssh's own refusal is that refusal (REMOTE_AUTH_FAILED here)", async () => {
    const error = await refused(new SupervisorError("WORKER_EXITED_EARLY", "exited 255", { tails: { stdout: "", stderr: "u@h.example: Permission denied (publickey).\n" } }));
    expect(isRemoteError(error) && error.code).toBe("REMOTE_AUTH_FAILED");
  });
});

describe("openRemoteWorker over the stand-in supervisor", () => {
  // Nothing listens on loopback port 1: an install attempted there is REMOTE_CONNECT_FAILED at once.
  const unreachable = () =>
    parseTarget({ name: "one", ssh: { host: "127.0.0.1", user: null, port: 1, identity_file: null, known_hosts: "/nonexistent/known_hosts" }, workdir: "/srv/klbr" });
  const bundle = { digest, files: [{ path: "klbr/x.py", data: Buffer.from("x = 1\n") }] };
  const open = () => openRemoteWorker({ target: unreachable(), bundle, script: "raise SystemExit(9)", sessionId: "root", generation: "g-1" });
  const refusal = (stderr: string) => new SupervisorError("WORKER_EXITED_EARLY", "exited", { tails: { stdout: "", stderr } });

  it("warm: one start, no install; the runtime's directory, nothing copied, the keeper's python", async () => {
    const worker = fakeWorker(PID_LINE);
    startWorkerMock.mockResolvedValueOnce(worker as unknown as Worker);
    const opened = await open();
    expect(startWorkerMock).toHaveBeenCalledTimes(1);
    expect(opened.runtime).toEqual({ digest, dir: `/srv/klbr/klbr-${digest}`, copied: false, python: "3.12.1" });
    expect(opened.remote.worker).toBe(worker);
  });

  it("a refusal other than an absent runtime or a refused forward is thrown as it is, with no install", async () => {
    startWorkerMock.mockRejectedValueOnce(refusal("u@127.0.0.1: Permission denied (publickey).\n"));
    const error = await open().catch((e: unknown) => e);
    expect(isRemoteError(error) && error.code).toBe("REMOTE_AUTH_FAILED");
    expect(startWorkerMock).toHaveBeenCalledTimes(1);
  });

  it("an absent runtime, or a refused forward (no work directory yet), goes on to install", async () => {
    for (const stderr of ["klbr.remote: runtime absent\n", "Error: remote port forwarding failed for listen path /srv/klbr/klbr-r-0.sock\n"]) {
      startWorkerMock.mockRejectedValueOnce(refusal(stderr));
      const error = await open().catch((e: unknown) => e);
      // The install's own ssh connection is the one refused here.
      expect(isRemoteError(error) && `${error.code}: ${error.message}`).toMatch(/^REMOTE_CONNECT_FAILED: target "one" \(127\.0\.0\.1:1\): ssh failed: .*refused/);
    }
    expect(startWorkerMock).toHaveBeenCalledTimes(2);
  });
});

describe("startRemoteWorker: the wait for the keeper's pid line", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("a line that comes after the hello is waited for", async () => {
    const worker = fakeWorker("some output before\n");
    const state = watch(start(worker));
    await vi.advanceTimersByTimeAsync(40);
    await drain();
    expect(state()).toBe("pending");
    worker.stdoutTail += PID_LINE;
    await vi.advanceTimersByTimeAsync(5);
    await drain();
    expect(state()).toBe("resolved");
    expect(worker.hardStop).not.toHaveBeenCalled();
  });

  it("is waited for up to 10 s: a line that comes at 10 s is taken", async () => {
    const worker = fakeWorker();
    const promise = start(worker);
    const state = watch(promise);
    await vi.advanceTimersByTimeAsync(9_999);
    await drain();
    expect(state()).toBe("pending");
    worker.stdoutTail = PID_LINE;
    await vi.advanceTimersByTimeAsync(1);
    await drain();
    expect(state()).toBe("resolved");
    expect((await promise).remotePid).toBe(4242);
  });

  it("not past 10 s: then the worker is hard-stopped and the start is REMOTE_START_FAILED", async () => {
    const worker = fakeWorker();
    const state = watch(start(worker));
    await vi.advanceTimersByTimeAsync(9_999);
    await drain();
    expect(state()).toBe("pending");
    expect(worker.hardStop).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await drain();
    expect(state()).toBe(`REMOTE_START_FAILED: target "one": the keeper never reported the worker's pid`);
    expect(worker.hardStop.mock.calls).toEqual([["remote_pid_unknown"]]);
  });

  it("not once the worker is dead: the start fails at the next look, not 10 s later", async () => {
    const worker = fakeWorker();
    const state = watch(start(worker));
    await vi.advanceTimersByTimeAsync(20);
    await drain();
    expect(state()).toBe("pending");
    worker.state = "dead";
    await vi.advanceTimersByTimeAsync(5);
    await drain();
    expect(state()).toBe(`REMOTE_START_FAILED: target "one": the keeper never reported the worker's pid`);
  });
});
