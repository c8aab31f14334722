// The sandbox battery (issue 15): from a cell, try what a hostile cell would against the operator's
// side, in both modes. Under bwrap every attempt fails; under none the test pins what is reachable,
// as the README documents it.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { removeTree, tempDir } from "./helpers";
import { alive, attempt, bwrapAvailable, escapeCode, exec, killMarked, klbr, marked, marker, probe, startDaemon, stopDaemon, until, type Daemon } from "./sandbox-support";

const HAS_BWRAP = bwrapAvailable();

const MODES = [
  { mode: "none" as const, args: [] as string[] },
  { mode: "bwrap" as const, args: ["--sandbox", "bwrap", "--network", "off"] },
];

describe.each(MODES)("a cell under sandbox $mode", ({ mode, args }) => {
  const sandboxed = mode === "bwrap";
  const secret = `s3cret-${process.pid}-${mode}`;
  const marks: string[] = [];
  let dataDir: string;
  let workspace: string;
  let outside: string;
  let daemon: Daemon | undefined;
  let tcp: Server;
  let port = 0;

  const py = (value: string) => JSON.stringify(value);
  const status = async () => (await daemon!.client.request({ op: "status" })) as {
    hooks: { pid: number };
    workbenches: Array<{ pid: number; sandbox: unknown }>;
    sandbox: unknown;
  };

  beforeAll(async () => {
    if (sandboxed && !HAS_BWRAP) return;
    dataDir = tempDir("klbr-sd-");
    workspace = tempDir("klbr-sw-");
    // Not under /tmp, which the sandbox replaces anyway: a directory the cell could really reach.
    outside = mkdtempSync("/var/tmp/klbr-so-");
    tcp = createServer((socket) => socket.end("hello from the host"));
    await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
    port = (tcp.address() as { port: number }).port;
    daemon = await startDaemon(dataDir, workspace, args, { ...process.env, TEST_DAEMON_SECRET: secret });
  }, 60_000);

  afterAll(async () => {
    if (daemon) {
      daemon.client.close();
      await stopDaemon(daemon.child);
    }
    for (const mark of marks) killMarked(mark);
    tcp?.close();
    for (const dir of [dataDir, workspace, outside]) if (dir) removeTree(dir);
  });

  const it = test.skipIf(sandboxed && !HAS_BWRAP);

  it("klbr status, the serve banner and runtime.inspect name the sandbox", async () => {
    const want = sandboxed ? { mode: "bwrap", network: false } : { mode: "none", network: true };
    const s = await status();
    expect(s.sandbox).toEqual(want);
    for (const b of s.workbenches) expect(b.sandbox).toEqual(want);
    expect(daemon!.stderr()).toContain(sandboxed ? "sandbox bwrap, network off" : "unsandboxed");
    const inspected = await probe(daemon!.client, "r['sandbox'] = (await runtime.inspect())['sandbox']");
    expect(inspected.sandbox).toEqual(want);
    const cli = await klbr(["--data-dir", dataDir, "status"]);
    expect(cli.stdout).toContain(sandboxed ? "sandbox    bwrap (network off)" : "sandbox    none");
  });

  it("the worker imports klbr's runtime from the host's bytecode zip (issue 23), read-only, and writes no bytecode", async () => {
    const r = await probe(
      daemon!.client,
      [
        "import klbr.worker.server as s",
        "r['file'] = s.__file__",
        "zip = s.__file__.split('.zip/')[0] + '.zip'",
        attempt("write", "open(zip, 'ab').close() or 'written'"),
        "r['dont_write'] = sys.dont_write_bytecode",
      ].join("\n"),
    );
    expect(r.file).toMatch(/\/klbr-[0-9a-f]{32}\.zip\/klbr\/worker\/server\.pyc$/);
    expect(r.dont_write).toBe(true);
    // Root without the sandbox may write anything; in it the zip is mounted read-only.
    if (sandboxed) expect(r.write).toBe("raised OSError");
  });

  it("reading the data directory and the database", async () => {
    const db = join(dataDir, "klbr.sqlite");
    const r = await probe(
      daemon!.client,
      [
        attempt("listing", `sorted(os.listdir(${py(dataDir)}))`),
        attempt("header", `open(${py(db)}, 'rb').read(15).decode('latin1')`),
        "import sqlite3",
        attempt("tables", `len(sqlite3.connect('file:' + ${py(db)} + '?mode=ro', uri=True).execute('select name from sqlite_master').fetchall())`),
        // Lifting the mask: unmount it, or remount / read-write (what CAP_SYS_ADMIN would allow).
        "import subprocess",
        `r['umount'] = subprocess.run(['umount', ${py(dataDir)}], capture_output=True).returncode`,
        "r['remount'] = subprocess.run(['mount', '-o', 'remount,rw', '/'], capture_output=True).returncode",
        "r['caps'] = [l.split()[1] for l in open('/proc/self/status') if l.startswith('CapEff')][0]",
        attempt("after", `sorted(os.listdir(${py(dataDir)}))`),
      ].join("\n"),
    );
    if (sandboxed) {
      expect(r.listing).toEqual([]); // an empty tmpfs over it
      expect(r.header).toBe("raised FileNotFoundError");
      expect(r.tables).toBe("raised OperationalError");
      expect(r.caps).toBe("0000000000000000");
      expect(r.umount).not.toBe(0);
      expect(r.remount).not.toBe(0);
      expect(r.after).toEqual([]);
    } else {
      expect(r.listing).toEqual(expect.arrayContaining(["klbr.sqlite", "klbr.sock", "releases"]));
      expect(r.header).toBe("SQLite format 3");
      expect(r.tables).toEqual(expect.any(Number));
    }
  });

  it("connecting to the control socket and asking the daemon for its status", async () => {
    const sock = join(dataDir, "klbr.sock");
    const r = await probe(
      daemon!.client,
      [
        "import socket, struct",
        "def ask():",
        "    s = socket.socket(socket.AF_UNIX)",
        `    s.connect(${py(sock)})`,
        "    body = json.dumps({'op': 'status', 'id': 1}).encode()",
        "    s.sendall(struct.pack('>I', len(body)) + body)",
        "    n = struct.unpack('>I', s.recv(4))[0]",
        "    data = b''",
        "    while len(data) < n: data += s.recv(n - len(data))",
        "    return json.loads(data)['ok']",
        attempt("status", "ask()"),
      ].join("\n"),
    );
    expect(r.status).toBe(sandboxed ? "raised FileNotFoundError" : true);
  });

  it("seeing the daemon's environment", async () => {
    const daemonPid = daemon!.child.pid!;
    const r = await probe(
      daemon!.client,
      [
        `secret = ${py(secret)}`,
        "r['own_environ'] = secret in os.environ.values()",
        attempt("daemon_environ", `secret.encode() in open('/proc/${daemonPid}/environ', 'rb').read()`),
        "found = False",
        "for p in filter(str.isdigit, os.listdir('/proc')):",
        "    try: found = found or secret.encode() in open(f'/proc/{p}/environ', 'rb').read()",
        "    except OSError: pass",
        "r['any_environ'] = found",
      ].join("\n"),
    );
    if (sandboxed) {
      expect(r).toEqual({ own_environ: false, daemon_environ: "raised FileNotFoundError", any_environ: false });
    } else {
      // The worker's own environment is C15's minimal one in both modes; but with the same user
      // and the same pid namespace, the daemon's /proc/<pid>/environ is readable.
      expect(r.own_environ).toBe(false);
      expect(r.daemon_environ).toBe(true);
      expect(r.any_environ).toBe(true);
    }
  });

  it("listing and signalling other processes: the daemon, the hooks worker and its token", async () => {
    const daemonPid = daemon!.child.pid!;
    const hooksPid = (await status()).hooks.pid;
    const r = await probe(
      daemon!.client,
      [
        "r['pids'] = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())",
        attempt("kill_daemon", `os.kill(${daemonPid}, 0) or 'signalled'`),
        attempt("kill_hooks", `os.kill(${hooksPid}, 0) or 'signalled'`),
        attempt("hooks_token", `b'KLBR_WORKER_TOKEN=' in open('/proc/${hooksPid}/environ', 'rb').read()`),
        "r['me'] = os.getpid()",
      ].join("\n"),
    );
    if (sandboxed) {
      expect(r.me).toBe(2);
      expect(r.pids).toEqual([1, 2]); // the namespace's init and the worker: nothing else
      expect(r.kill_daemon).toBe("raised ProcessLookupError");
      expect(r.kill_hooks).toBe("raised ProcessLookupError");
      expect(r.hooks_token).toBe("raised FileNotFoundError");
    } else {
      expect(r.pids).toEqual(expect.arrayContaining([daemonPid, hooksPid]));
      expect(r.kill_daemon).toBe("signalled");
      expect(r.kill_hooks).toBe("signalled");
      expect(r.hooks_token).toBe(true);
    }
  });

  it("writing outside the workspace (a sibling directory, /tmp) and inside it", async () => {
    const tmpName = `/tmp/klbr-sbx-${process.pid}-${mode}`;
    const r = await probe(
      daemon!.client,
      [
        attempt("outside", `open(${py(join(outside, "planted"))}, 'w').write('x')`),
        attempt("tmp", `open(${py(tmpName)}, 'w').write('x')`),
        attempt("home", `open(os.path.expanduser('~/.klbr-sbx-${process.pid}'), 'w').write('x')`),
        attempt("inside", `open(${py(join(workspace, "made-inside"))}, 'w').write('x')`),
      ].join("\n"),
    );
    expect(r.inside).toBe(1);
    expect(existsSync(join(workspace, "made-inside"))).toBe(true);
    if (sandboxed) {
      expect(r.outside).toBe("raised OSError"); // EROFS
      expect(r.home).toBe("raised OSError");
      expect(r.tmp).toBe(1); // its own fresh /tmp ...
      expect(existsSync(tmpName)).toBe(false); // ... which is not the host's
    } else {
      expect(r.outside).toBe(1);
      expect(existsSync(join(outside, "planted"))).toBe(true);
      expect(existsSync(tmpName)).toBe(true);
      rmSync(tmpName, { force: true });
      rmSync(join(process.env.HOME ?? "/root", `.klbr-sbx-${process.pid}`), { force: true });
    }
  });

  it("reaching a server on 127.0.0.1, from the cell and from workspace.run", async () => {
    const connect = `import socket; s = socket.create_connection(('127.0.0.1', ${port}), timeout=5); print(s.recv(100).decode())`;
    const r = await probe(
      daemon!.client,
      [
        "import socket",
        attempt("cell", `socket.create_connection(('127.0.0.1', ${port}), timeout=5).recv(100).decode()`),
        `run = await runtime.run([sys.executable, '-c', ${py(connect)}])`,
        "r['run'] = [run['exit_code'], run['stdout'].strip()]",
      ].join("\n"),
    );
    if (sandboxed) {
      expect(r.cell).toMatch(/^raised (ConnectionRefusedError|OSError)$/);
      expect((r.run as unknown[])[0]).not.toBe(0);
    } else {
      expect(r.cell).toBe("hello from the host");
      expect(r.run).toEqual([0, "hello from the host"]);
    }
  });

  it("a workspace.run command sees what its cell's worker sees", async () => {
    const script = `import os, json; print(json.dumps([sorted(os.listdir(${py(dataDir)})) if os.path.isdir(${py(dataDir)}) else None, len([p for p in os.listdir('/proc') if p.isdigit()]) < 10]))`;
    const r = await probe(daemon!.client, `run = await runtime.run([sys.executable, '-c', ${py(script)}])\nr['seen'] = json.loads(run['stdout'])`);
    const [listing, fewProcs] = r.seen as [string[], boolean];
    if (sandboxed) {
      expect(listing).toEqual([]);
      expect(fewProcs).toBe(true);
    } else {
      expect(listing).toContain("klbr.sqlite");
    }
  });

  it("leaving a process behind after an interrupt the cell ignores (the ladder ends in a hard stop)", async () => {
    const mark = marker(`${mode}-int`);
    marks.push(mark);
    // The cell says (a file in the workspace, which both modes share with the host) once it sits in
    // the loop that swallows every interrupt: interrupted any earlier (still in subprocess.run), it
    // would end at the message rung, which is not what this test is about.
    const inLoop = join(workspace, `${mark}.in-loop`);
    const running = exec(
      daemon!.client,
      `import os, sys\n${escapeCode(mark)}\nwhile True:\n    try:\n        open(${py(inLoop)}, 'w').close()\n        time.sleep(10)\n    except BaseException:\n        pass`,
    );
    expect(await until(() => existsSync(inLoop))).toBe(true);
    expect(marked(mark)).toHaveLength(1);
    const outcome = (await daemon!.client.request({ op: "interrupt" })) as { rung: string };
    expect(outcome.rung).toBe("hard_stop");
    expect((await running).status).toBe("interrupted");
    // Both modes: the worker's tree is walked while the worker (a child subreaper) still holds the orphan.
    expect(await until(() => marked(mark).length === 0)).toBe(true);
  }, 60_000);

  it("leaving a process behind after the worker dies on its own", async () => {
    const mark = marker(`${mode}-death`);
    marks.push(mark);
    const workerPid = (await status()).workbenches[0]!.pid;
    await probe(daemon!.client, escapeCode(mark));
    expect(marked(mark)).toHaveLength(1);
    const done = await exec(daemon!.client, "import os\nos._exit(3)");
    expect(done.status).toBe("failed");
    expect(await until(() => !alive(workerPid))).toBe(true);
    // bwrap: the namespace's init dies with the worker and takes the orphan. none: the supervisor's
    // guard (a child subreaper above the worker) kept the orphan below it and kills it.
    expect(await until(() => marked(mark).length === 0)).toBe(true);
  }, 60_000);

  it("leaving a process behind after the daemon is killed with SIGKILL", async () => {
    const mark = marker(`${mode}-kill9`);
    marks.push(mark);
    const s = await status();
    const workers = [s.hooks.pid, ...s.workbenches.map((b) => b.pid)];
    await probe(daemon!.client, escapeCode(mark));
    expect(marked(mark)).toHaveLength(1);
    const exited = new Promise((resolve) => daemon!.child.once("exit", resolve));
    daemon!.child.kill("SIGKILL");
    await exited;
    expect(await until(() => workers.every((pid) => !alive(pid)))).toBe(true);
    // bwrap: bwrap dies with its parent, its init with bwrap, the namespace with its init. none: the
    // guard is told of the daemon's death (PR_SET_PDEATHSIG) and kills everything below it.
    expect(await until(() => marked(mark).length === 0)).toBe(true);
  }, 60_000);
});

describe.skipIf(!HAS_BWRAP)("bwrap with the network on, and bwrap unable to start", () => {
  test("network on: the sandboxed cell reaches the host's loopback", async () => {
    const { startTestHost } = await import("./helpers");
    const tcp = createServer((socket) => socket.end("on"));
    await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
    const port = (tcp.address() as { port: number }).port;
    const h = await startTestHost({ sandbox: "bwrap", network: true });
    try {
      const done = await h.host.execute(`import socket\nsocket.create_connection(('127.0.0.1', ${port}), timeout=5).recv(10).decode()`);
      expect(done.output).toEqual([{ stream: "result", text: "'on'" }]);
      expect(await h.host.status()).toMatchObject({ sandbox: { mode: "bwrap", network: true } });
    } finally {
      await h.close();
      tcp.close();
    }
  });

  test("the hooks worker sees, of the data directory, exactly its own release (after an activation too)", async () => {
    const { startTestHost } = await import("./helpers");
    const { snapshotRelease } = await import("@klbr/activation");
    const { defaultPythonDir } = await import("../src/paths");
    const { cpSync, chmodSync, readdirSync, readFileSync, writeFileSync } = await import("node:fs");
    const h = await startTestHost({ sandbox: "bwrap", network: false });
    try {
      const draft = join(h.workspace, "draft");
      cpSync(join(defaultPythonDir(), "klbr_hooks"), draft, { recursive: true, filter: (src) => !src.includes("__pycache__") });
      for (const f of readdirSync(draft)) chmodSync(join(draft, f), 0o644);
      // delivery.review holds every message, with what this hooks worker can see as the reason.
      const spy = [
        "",
        "import json as _json, os as _os",
        "def delivery(request, context):",
        `    data = ${JSON.stringify(h.dataDir)}`,
        "    seen = {'data': sorted(_os.listdir(data)), 'releases': sorted(_os.listdir(data + '/releases')), 'pid': _os.getpid()}",
        "    return Hold(_json.dumps(seen))",
        "",
      ].join("\n");
      writeFileSync(join(draft, "defaults.py"), readFileSync(join(draft, "defaults.py"), "utf8") + spy);
      const release = snapshotRelease(draft, join(h.dataDir, "releases"));
      expect(readdirSync(join(h.dataDir, "releases")).length).toBeGreaterThanOrEqual(2); // the default one too
      const epoch = h.host.hooks.info()!.epoch;
      const done = await h.host.execute(`await runtime.activate(${JSON.stringify(release.path)}, ${epoch})\nr = await runtime.send('hi')\n(r['status'], r['reason'])`);
      const [, status, reason] = /^\('(\w+)', '(.*)'\)$/.exec(done.output.at(-1)!.text) ?? [];
      expect(status).toBe("held");
      expect(JSON.parse(reason!)).toEqual({ data: ["releases"], releases: [release.digest], pid: 2 });
    } finally {
      await h.close();
    }
  });

  test.each([
    ["not installed", "/nonexistent/bwrap", /SANDBOX_UNAVAILABLE: .*not installed: install bubblewrap \(Debian\/Ubuntu: apt-get install bubblewrap/],
    ["without user namespaces", "FAKE", /SANDBOX_UNAVAILABLE: .*No permissions to create a new namespace.*user namespaces are probably disabled/i],
  ])("bwrap %s: serve refuses to start with a coded error saying how to fix it", async (_name, bwrap, expected) => {
    const dir = tempDir("klbr-su-");
    try {
      let program = bwrap;
      if (bwrap === "FAKE") {
        program = join(dir, "bwrap");
        mkdirSync(dir, { recursive: true });
        const { writeFileSync, chmodSync } = await import("node:fs");
        writeFileSync(program, "#!/bin/sh\necho 'bwrap: No permissions to create a new namespace' >&2\nexit 1\n");
        chmodSync(program, 0o755);
      }
      // The data directory beside the workspace, not in it (that is SANDBOX_DATA_IN_WORKSPACE).
      const data = join(dir, "data");
      const workspace = join(dir, "ws");
      mkdirSync(workspace, { recursive: true });
      const r = await klbr(["--data-dir", data, "--workspace", workspace, "serve", "--sandbox", "bwrap"], { ...process.env, KLBR_BWRAP: program });
      expect(r.code).toBe(69); // EX_UNAVAILABLE: cannot run here
      expect(r.stderr).toMatch(expected);
      expect(r.stderr).toContain("--sandbox none");
      expect(r.stderr).not.toContain("klbr: serving");
      expect(existsSync(join(data, "klbr.sock"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a sandbox value it does not know, or the network off without a sandbox, is refused", async () => {
    const dir = tempDir("klbr-su-");
    try {
      const bad = await klbr(["--data-dir", join(dir, "d"), "--workspace", dir, "serve", "--sandbox", "docker"]);
      expect(bad.code).toBe(64); // EX_USAGE
      expect(bad.stderr).toContain('SANDBOX_INVALID: sandbox must be "none" or "bwrap", got "docker"');
      const off = await klbr(["--data-dir", join(dir, "d"), "--workspace", dir, "serve", "--network", "off"]);
      expect(off.code).toBe(64);
      expect(off.stderr).toContain("SANDBOX_INVALID: network off needs a sandbox");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
