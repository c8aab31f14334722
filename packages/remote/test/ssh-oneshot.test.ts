// One-shot commands over a real sshd on loopback: what sshRun hands back, the install exchange as
// ensureRuntime reads it, probeTarget's version rule, and how a failed start is named. The remote
// "python" of some cases is a small script in the test sshd's directory (the same machine), so
// each answer the host must read can be produced on purpose.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { encodeBundle, ensureRuntime, isRemoteError, openRemoteWorker, parseTarget, probeTarget, sshRun, startRemoteWorker, type Target } from "../src/index.js";
import { PYTHON_DIR, until, useTestSshd } from "./support.js";

const sshd = await useTestSshd();

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isRemoteError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  return "resolved";
}

let seq = 0;

describe.skipIf(!sshd)("one-shot ssh commands", () => {
  const target = (extra: Partial<Target> = {}): Target => parseTarget({ ...sshd!.target("one", `${sshd!.dir}/o${++seq}`), ...extra });
  /** An executable shell script on the "remote" side (this machine). */
  const script = (name: string, body: string): string => {
    const path = join(sshd!.dir, name);
    writeFileSync(path, `#!/bin/sh\n${body}\n`);
    chmodSync(path, 0o755);
    return path;
  };
  const bundle = { digest: "a".repeat(64), files: [{ path: "klbr/x.py", data: Buffer.from("x = 1\n") }] };

  it("sshRun hands back the command's exit status and its output exactly", async () => {
    const result = await sshRun(target(), "printf 'a\\nb\\n'; printf err >&2; exit 7");
    expect(result).toEqual({ exitCode: 7, stdout: "a\nb\n", stderr: "err" });
  });

  it("sshRun without a conversation closes stdin at once", async () => {
    expect(await sshRun(target(), "cat; echo eof", undefined, { timeoutMs: 15_000 })).toEqual({ exitCode: 0, stdout: "eof\n", stderr: "" });
  });

  it("a conversation sees each line in order, answers on stdin, and ends stdin when it says so", async () => {
    const seen: string[] = [];
    const result = await sshRun(
      target(),
      'echo first; read a; echo "got $a"; echo second; echo third; cat; echo done',
      (line, stdin) => {
        seen.push(line);
        if (line === "first") stdin.write("hi\n");
        if (line === "second") return "end";
      },
      { timeoutMs: 15_000 },
    );
    expect(seen).toEqual(["first", "got hi", "second"]);
    expect(result.stdout).toBe("first\ngot hi\nsecond\nthird\ndone\n");
    expect(result.exitCode).toBe(0);
  });

  it("an empty line is a line: the conversation sees it, and the lines after it in the same chunk", async () => {
    const seen: string[] = [];
    const result = await sshRun(target(), "printf 'first\\n\\nsecond\\nno newline'", (line) => void seen.push(line), { timeoutMs: 15_000 });
    expect(seen).toEqual(["first", "", "second"]);
    expect(result).toEqual({ exitCode: 0, stdout: "first\n\nsecond\nno newline", stderr: "" });
  });

  it("a command that outlives the timeout is REMOTE_CONNECT_FAILED naming the time", async () => {
    expect(await refusal(sshRun(target(), "sleep 30", undefined, { timeoutMs: 1500 }))).toBe('REMOTE_CONNECT_FAILED: target "one": no answer within 1500 ms');
  });

  it("an ssh program that cannot run is REMOTE_CONNECT_FAILED", async () => {
    const t = target();
    // sshRun takes ssh from PATH: an empty PATH leaves it nothing to run.
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      expect(await refusal(sshRun(t, "true"))).toMatch(/^REMOTE_CONNECT_FAILED: cannot run ssh: .*ENOENT/);
    } finally {
      process.env.PATH = path;
    }
  });

  it("probeTarget: 3.11 or newer can run the worker, older cannot; the round trip in tenths of ms", async () => {
    for (const [version, ok] of [["3.10.9", false], ["3.11.0", true], ["3.12.4", true], ["4.0.0", true], ["2.12.0", false]] as const) {
      const probe = await probeTarget(target({ python: script(`py-${version}`, `echo ${version}`) }));
      expect([probe.python, probe.python_ok]).toEqual([version, ok]);
      expect(probe.target).toBe("one");
      expect(probe.round_trip_ms).toBeGreaterThan(0);
      expect(Number.isInteger(Math.round(probe.round_trip_ms * 10))).toBe(true);
      expect(Math.abs(probe.round_trip_ms * 10 - Math.round(probe.round_trip_ms * 10))).toBeLessThan(1e-6);
    }
  });

  it("probeTarget: an interpreter that fails, or answers no version, is REMOTE_PYTHON_MISSING naming it", async () => {
    const failing = script("py-fails", "echo 'no such module' >&2; exit 1");
    expect(await refusal(probeTarget(target({ python: failing })))).toBe(`REMOTE_PYTHON_MISSING: target "one": cannot run "${failing}" (exit 1): no such module`);
    const chatty = script("py-chatty", "echo Python 3.11.2");
    expect(await refusal(probeTarget(target({ python: chatty })))).toBe(`REMOTE_PYTHON_MISSING: target "one": cannot run "${chatty}" (exit 0): `);
  });

  it("probeTarget: only a whole major.minor.micro line from an interpreter that exits 0 is a version", async () => {
    expect(await probeTarget(target({ python: script("py-13", "echo 13.0.12") }))).toMatchObject({ python: "13.0.12", python_ok: true });
    const suffixed = script("py-suffixed", "echo 3.12.1+");
    expect(await refusal(probeTarget(target({ python: suffixed })))).toBe(`REMOTE_PYTHON_MISSING: target "one": cannot run "${suffixed}" (exit 0): `);
    const failing = script("py-says-but-fails", "echo 3.12.1; echo broken >&2; exit 1");
    expect(await refusal(probeTarget(target({ python: failing })))).toBe(`REMOTE_PYTHON_MISSING: target "one": cannot run "${failing}" (exit 1): broken`);
  });

  it("probeTarget: the round trip is the time the probe took, no more", async () => {
    const started = performance.now();
    const probe = await probeTarget(target({ python: script("py-rt", "echo 3.12.1") }));
    const elapsed = performance.now() - started;
    expect(probe.round_trip_ms).toBeGreaterThan(0);
    expect(probe.round_trip_ms).toBeLessThanOrEqual(elapsed + 0.1);
  });

  it("probeTarget: the round trip is performance.now() around the ssh command, rounded to tenths of a ms", async () => {
    // Only the clock is fake (ssh runs for real): at 1000 ms when the probe starts, it moves 234.56 ms while the probe is out.
    vi.useFakeTimers({ toFake: ["performance"] });
    try {
      vi.advanceTimersByTime(1000);
      const probe = probeTarget(target({ python: script("py-clock", "echo 3.12.1") }));
      vi.advanceTimersByTime(234.56);
      expect((await probe).round_trip_ms).toBe(234.6);
    } finally {
      vi.useRealTimers();
    }
  });

  it("probeTarget: a failure's message keeps the last 500 characters of stderr", async () => {
    const noisy = script("py-noisy", `printf '%0100d' 0 >&2; printf 'y%.0s' $(seq 500) >&2; exit 1`);
    expect(await refusal(probeTarget(target({ python: noisy })))).toMatch(/^REMOTE_PYTHON_MISSING: .*\(exit 1\): y{500}$/);
  });

  describe("ensureRuntime reads the install exchange", () => {
    const py = (code: string) => code;
    it("present: nothing copied, the python named, the runtime's directory returned; the script gets workdir and digest", async () => {
      const t = target();
      mkdirSync(t.workdir);
      const record = join(t.workdir, "argv.json");
      const runtime = await ensureRuntime(
        t,
        bundle,
        py(`import json, sys\njson.dump(sys.argv[1:], open(${JSON.stringify(record)}, "w"))\nprint("klbr.install python=3.12.1")\nprint("klbr.install present")`),
      );
      expect(runtime).toEqual({ digest: bundle.digest, dir: `${t.workdir}/klbr-${bundle.digest}`, copied: false, python: "3.12.1" });
      expect(JSON.parse(readFileSync(record, "utf8"))).toEqual([t.workdir, bundle.digest]);
    });

    it("only a whole line is the version: one with text before or after it is not", async () => {
      const t = target();
      const runtime = await ensureRuntime(
        t,
        bundle,
        py(`print("klbr.install python=3.12.1")\nprint("said klbr.install python=1.1.1")\nprint("klbr.install python=2.2.2 and more")\nprint("klbr.install present")`),
      );
      expect(runtime).toMatchObject({ copied: false, python: "3.12.1" });
    });

    it("absent: the bundle follows on stdin, whole, and stdin then ends", async () => {
      const t = target();
      mkdirSync(t.workdir);
      const got = join(t.workdir, "bundle.json");
      const runtime = await ensureRuntime(
        t,
        bundle,
        py(`import sys\nprint("klbr.install python=3.11.9", flush=True)\nprint("klbr.install absent", flush=True)\nopen(${JSON.stringify(got)}, "w").write(sys.stdin.read())\nprint("klbr.install installed")`),
      );
      expect(runtime).toMatchObject({ copied: true, python: "3.11.9" });
      expect(readFileSync(got, "utf8")).toBe(encodeBundle(bundle));
    });

    it("a chatty line before the exchange does not end it; \"present\" ends stdin", async () => {
      const t = target();
      mkdirSync(t.workdir);
      const record = join(t.workdir, "stdin.txt");
      // Bounded: a stdin still open after 30 s is recorded as open, so the test fails instead of hanging.
      const runtime = await ensureRuntime(
        t,
        bundle,
        py(
          `import select, sys\nprint("starting", flush=True)\nprint("klbr.install python=3.12.1", flush=True)\nprint("klbr.install present", flush=True)\n` +
            `ready = select.select([sys.stdin], [], [], 30)[0]\nopen(${JSON.stringify(record)}, "w").write("closed" if ready and sys.stdin.read() == "" else "open")`,
        ),
      );
      expect(runtime).toMatchObject({ copied: false, python: "3.12.1" });
      expect(readFileSync(record, "utf8")).toBe("closed");
      const got = join(t.workdir, "bundle.json");
      const cold = await ensureRuntime(
        t,
        bundle,
        py(`import sys\nprint("starting", flush=True)\nprint("klbr.install python=3.11.9", flush=True)\nprint("klbr.install absent", flush=True)\nopen(${JSON.stringify(got)}, "w").write(sys.stdin.read())`),
      );
      expect(cold).toMatchObject({ copied: true, python: "3.11.9" });
      expect(readFileSync(got, "utf8")).toBe(encodeBundle(bundle));
    });

    it("absent, then an exit before the bundle is read: REMOTE_INSTALL_FAILED, and the unread bundle is no error of its own", async () => {
      // 4 MiB cannot fit the pipes between here and the remote script, which never reads it: the
      // write outlives ssh (a broken pipe, which execa ignores on stdin) and must not escape.
      const big = { digest: bundle.digest, files: [{ path: "klbr/big.py", data: Buffer.alloc(4 << 20, 0x61) }] };
      const script = py(`import sys\nprint("klbr.install python=3.12.1", flush=True)\nprint("klbr.install absent", flush=True)\nsys.stderr.write("klbr.install: INSTALL_IO: refused\\n")\nsys.exit(2)`);
      expect(await refusal(ensureRuntime(target(), big, script))).toBe('REMOTE_INSTALL_FAILED: target "one": installing the runtime failed (exit 2): klbr.install: INSTALL_IO: refused');
    });

    it("a failure's message keeps the last 500 characters of stderr", async () => {
      const stderr = `sys.stderr.write("x" * 100 + "y" * 500 + "\\n")`;
      const missing = await refusal(ensureRuntime(target(), bundle, py(`import sys\n${stderr}\nsys.exit(2)`)));
      expect(missing).toMatch(/^REMOTE_PYTHON_MISSING: .*\(exit 2\): y{500}$/);
      const failed = await refusal(ensureRuntime(target(), bundle, py(`import sys\nprint("klbr.install python=3.11.9")\n${stderr}\nsys.exit(2)`)));
      expect(failed).toMatch(/^REMOTE_INSTALL_FAILED: .*\(exit 2\): y{500}$/);
    });

    it("exit 3 is REMOTE_PYTHON_TOO_OLD naming the version", async () => {
      expect(await refusal(ensureRuntime(target(), bundle, py(`import sys\nprint("klbr.install python=3.10.2")\nsys.exit(3)`)))).toBe(
        'REMOTE_PYTHON_TOO_OLD: target "one": python 3.10.2 is older than 3.11',
      );
    });

    it("another failure after the version line is REMOTE_INSTALL_FAILED with the exit status and stderr", async () => {
      expect(
        await refusal(ensureRuntime(target(), bundle, py(`import sys\nprint("klbr.install python=3.11.9")\nsys.stderr.write("klbr.install: INSTALL_IO: disk full\\n")\nsys.exit(2)`))),
      ).toBe('REMOTE_INSTALL_FAILED: target "one": installing the runtime failed (exit 2): klbr.install: INSTALL_IO: disk full');
    });

    it("exit 0 without a version line is REMOTE_PYTHON_MISSING, not a runtime taken as installed", async () => {
      // An interpreter that ran nothing it was given (here: the script never prints), then exited 0.
      const t = target();
      expect(await refusal(ensureRuntime(t, bundle, py(`import sys\nsys.stderr.write("ignored -c\\n")`)))).toBe(
        `REMOTE_PYTHON_MISSING: target "one": cannot run ${JSON.stringify(t.python)} (exit 0): ignored -c`,
      );
    });

    it("exit 0 after the version line but neither present nor absent is REMOTE_INSTALL_FAILED", async () => {
      expect(await refusal(ensureRuntime(target(), bundle, py(`print("klbr.install python=3.12.1")\nprint("klbr.install maybe")`)))).toBe(
        'REMOTE_INSTALL_FAILED: target "one": the install script exited 0 without saying whether the runtime is there',
      );
    });

    it("a failure before any version line, or exit 127, is REMOTE_PYTHON_MISSING", async () => {
      const t = target();
      expect(await refusal(ensureRuntime(t, bundle, py(`import sys\nsys.stderr.write("boom\\n")\nsys.exit(2)`)))).toBe(
        `REMOTE_PYTHON_MISSING: target "one": cannot run ${JSON.stringify(t.python)} (exit 2): boom`,
      );
      expect(await refusal(ensureRuntime(t, bundle, py(`import sys\nprint("klbr.install python=3.11.9")\nsys.exit(127)`)))).toMatch(/^REMOTE_PYTHON_MISSING: .*\(exit 127\)/);
    });
  });

  describe("a start that fails is named", () => {
    const runtimeThere = (t: Target) => {
      const dir = `${t.workdir}/klbr-${bundle.digest}`;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, ".klbr-digest"), bundle.digest);
      return { digest: bundle.digest, dir };
    };

    it("a worker that exits at once is REMOTE_START_FAILED with the supervisor's code and the remote stderr", async () => {
      const t = target({ python: script("py-dies", "echo 'worker cannot start' >&2; exit 1") });
      const said = await refusal(startRemoteWorker({ target: t, runtime: runtimeThere(t), sessionId: "root", generation: "g-dies", handshakeTimeoutMs: 15_000 }));
      expect(said).toMatch(/^REMOTE_START_FAILED: target "one": the worker did not start \([A-Z_]+\): .* \| stderr: worker cannot start$/);
    });

    it("the ssh program and live output given to startRemoteWorker are the ones used", async () => {
      const t = target();
      const record = join(sshd!.dir, `ssh-argv-${++seq}`);
      // The host-side "ssh": records its argv, one word a line, and fails before connecting.
      const ssh = script(`ssh-${seq}`, `printf '%s\\n' "$@" > ${record}; echo 'not connecting' >&2; exit 1`);
      const said = await refusal(startRemoteWorker({ target: t, runtime: runtimeThere(t), sessionId: "root", generation: "g-ssh", ssh, liveOutput: true, handshakeTimeoutMs: 15_000 }));
      expect(said).toMatch(/^REMOTE_START_FAILED: .* \| stderr: not connecting$/);
      const argv = readFileSync(record, "utf8").split("\n");
      expect(argv.slice(0, 3)).toEqual(["-F", "none", "-T"]);
      expect(argv.at(-2)).toMatch(/ -m klbr\.worker --token-stdin .*--live-output/);
    });

    it("a keeper whose pid line never comes is REMOTE_START_FAILED, and the worker it started is stopped", async () => {
      const t = target();
      // The real worker, with the keeper's first line (its pid) filtered out of its stdout.
      const runtime = runtimeThere(t);
      const python = script(
        `py-no-pid-${++seq}`,
        `PYTHONPATH=${PYTHON_DIR} ${sshd!.target("x").python} "$@" | grep --line-buffered -v '^klbr\\.keeper pid='`,
      );
      const said = await refusal(startRemoteWorker({ target: { ...t, python }, runtime, sessionId: "root", generation: "g-nopid" }));
      expect(said).toBe('REMOTE_START_FAILED: target "one": the keeper never reported the worker\'s pid');
      // hardStop ended ssh: the keeper's stdin closed, and it took the worker with it.
      expect(await until(() => sshd!.descendants().length === 0)).toBe(true);
    });

    it("a wrong host key at start is REMOTE_HOST_KEY_MISMATCH, and open does not go on to install", async () => {
      const t = target({ ssh: { ...target().ssh, known_hosts: sshd!.wrongKnownHosts } });
      const said = await refusal(startRemoteWorker({ target: t, runtime: runtimeThere(t), sessionId: "root", generation: "g-key" }));
      expect(said).toMatch(/^REMOTE_HOST_KEY_MISMATCH: target "one" \(127\.0\.0\.1:\d+\): its host key is not the one in /);
      expect(await refusal(openRemoteWorker({ target: t, bundle, script: "raise SystemExit(9)", sessionId: "root", generation: "g-key2" }))).toMatch(/^REMOTE_HOST_KEY_MISMATCH: /);
    });
  });
});
