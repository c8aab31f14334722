import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { isLive, startTestSshd } from "../../../test-support/sshd.js";
import { readLog } from "../src/store/log-view";
import type { Host } from "../src/runtime/host";
import { startTestHost, tempDir } from "./helpers";

const { sshd, skip } = await startTestSshd();
if (skip) console.warn(skip);

/** Poll until `check` holds (bounded generously: this box is shared). */
async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return await check();
}

/** Run a cell whose last line prints JSON; returns the parsed value. */
async function json(host: Host, code: string): Promise<any> {
  const report = await host.execute(`import json\nfrom klbr.runtime import HostError\n${code}`);
  expect(report.status, JSON.stringify(report)).toBe("ok");
  const out = report.output.filter((o) => o.stream === "stdout").map((o) => o.text).join("");
  return JSON.parse(out);
}

// One helper the cells share: the call with the namespace's identity spelled out.
const CALL = `
async def call(ns, op, code):
    return await runtime.remote_call(ns["target"], ns["namespace_id"], ns["namespace_generation"], op, "execute", {"code": code})
async def code_of(awaitable):
    try:
        await awaitable
    except HostError as e:
        return [e.code, e.message]
    return None
`;

describe.skipIf(!sshd)("remote namespaces through the host (real sshd on loopback)", () => {
  let host: Host;
  let close: () => Promise<void>;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = tempDir();
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const good = sshd!.target("loop", join(sshd!.dir, "hw"));
    const wrong = { ...sshd!.target("wrongkey", join(sshd!.dir, "hk")), ssh: { ...good.ssh, known_hosts: sshd!.wrongKnownHosts } };
    writeFileSync(join(dataDir, "targets.json"), JSON.stringify({ targets: [good, wrong] }));
    ({ host, close } = await startTestHost({ dataDir, interruptGraceMs: 500, sigintGraceMs: 2000 }));
    await host.execute(CALL);
  });
  afterAll(async () => {
    await close?.();
    if (sshd) expect(await until(() => sshd.descendants().length === 0)).toBe(true);
    await sshd?.stop();
  });

  test("ensure, two calls keeping state, a cancel of a busy loop, close: every row logged, nothing left", async () => {
    const r = await json(
      host,
      `import asyncio
ns = await runtime.remote_ensure("loop")
again = await runtime.remote_ensure("loop")
a = await call(ns, "op-1", "import os\\nx = 41\\nos.getpid()")
b = await call(ns, "op-2", "x + 1")
busy = asyncio.create_task(call(ns, "op-3", "while True:\\n    pass"))
await asyncio.sleep(0.5)
c = await runtime.remote_cancel(ns["namespace_id"], ns["namespace_generation"], "op-3")
d = await busy
e = await runtime.remote_close(ns["namespace_id"], ns["namespace_generation"])
late = await code_of(call(ns, "op-4", "x"))
print(json.dumps({"ns": ns, "again": again, "a": a, "b": b, "c": c, "d": d, "e": e, "late": late}))`,
    );
    expect(Object.keys(r.ns).sort()).toEqual(["namespace_generation", "namespace_id", "remote_pid", "target"]);
    expect(r.ns).toMatchObject({ target: "loop", namespace_generation: "g-1" });
    expect(r.again).toEqual(r.ns);
    expect(r.a).toEqual({ kind: "cell", status: "ok", output: [{ stream: "result", text: String(r.ns.remote_pid) }], truncated_bytes: 0, error: null });
    expect(r.b).toEqual({ kind: "cell", status: "ok", output: [{ stream: "result", text: "42" }], truncated_bytes: 0, error: null });
    expect(r.c).toMatchObject({ namespace_id: r.ns.namespace_id, namespace_generation: "g-1", operation_id: "op-3", status: "cancelled" });
    expect(["message", "sigint"]).toContain(r.c.rung);
    expect(r.d).toMatchObject({ kind: "cell", status: "interrupted" });
    expect(r.e).toEqual({ namespace_id: r.ns.namespace_id, namespace_generation: "g-1", status: "closed" });
    expect(r.late[0]).toBe("scope_expired");
    expect(await until(() => !isLive(r.ns.remote_pid))).toBe(true);
    expect(await until(() => sshd!.descendants().length === 0)).toBe(true);

    const log = readLog((host as unknown as { sqlite: import("better-sqlite3").Database }).sqlite);
    const mine = log.filter((e) => e.namespace_id === r.ns.namespace_id || e.id === r.ns.namespace_id);
    expect(mine.filter((e) => e.kind === "remote.namespace").map((e) => e.status)).toEqual(["closed"]);
    const gen = mine.find((e) => e.kind === "remote.generation.end")!;
    expect(gen).toMatchObject({ generation: "g-1", remote_pid: r.ns.remote_pid, runtime_copied: true });
    expect(["shutdown", "closed"]).toContain(gen.end_reason);
    const ops = mine.filter((e) => e.kind === "remote.operation");
    expect(ops.map((o) => [o.operation_id, o.status])).toEqual([
      ["op-1", "ok"],
      ["op-2", "ok"],
      ["op-3", "interrupted"],
    ]);
    expect(ops[1]!.completion).toEqual(r.b);
    const methods = log.filter((e) => e.kind === "request" && String(e.method).startsWith("remote.")).map((e) => e.method);
    expect(methods).toEqual(expect.arrayContaining(["remote.ensure", "remote.call", "remote.cancel", "remote.close"]));
  });

  test("calls are idempotent by operation_id; bad calls get stable codes", async () => {
    const r = await json(
      host,
      `ns = await runtime.remote_ensure("loop")
first = await call(ns, "same", "import random\\nrandom.random()")
second = await call(ns, "same", "import random\\nrandom.random()")
other = await code_of(call(ns, "same", "2"))
badop = await code_of(runtime.remote_call("loop", ns["namespace_id"], ns["namespace_generation"], "x1", "eval", {"code": "1"}))
badpayload = await code_of(runtime.remote_call("loop", ns["namespace_id"], ns["namespace_generation"], "x2", "execute", {"code": "1", "more": 1}))
badns = await code_of(runtime.remote_call("loop", "nope", "g-1", "x3", "execute", {"code": "1"}))
badgen = await code_of(runtime.remote_call("loop", ns["namespace_id"], "g-9", "x4", "execute", {"code": "1"}))
notarget = await code_of(runtime.remote_ensure("absent"))
remote_request = await call(ns, "rr", "await runtime.send('hi')")
idle = await runtime.remote_cancel(ns["namespace_id"], ns["namespace_generation"], "never")
await runtime.remote_close(ns["namespace_id"], ns["namespace_generation"])
print(json.dumps({"first": first, "second": second, "other": other, "badop": badop, "badpayload": badpayload, "badns": badns, "badgen": badgen, "notarget": notarget, "rr": remote_request, "idle": idle}))`,
    );
    expect(r.second).toEqual(r.first);
    expect(r.other[0]).toBe("conflict");
    expect(r.badop[0]).toBe("invalid_request");
    expect(r.badpayload[0]).toBe("invalid_request");
    expect(r.badns[0]).toBe("scope_expired");
    expect(r.badgen[0]).toBe("scope_expired");
    expect(r.notarget[0]).toBe("not_found");
    expect(r.rr).toMatchObject({ kind: "cell", status: "error" });
    expect(r.rr.error).toMatch(/unsupported/);
    expect(r.idle).toMatchObject({ status: "not_running", rung: null });
  });

  test("a dropped connection invalidates the generation; the next ensure starts g-2 with fresh state", async () => {
    const r1 = await json(host, `ns = await runtime.remote_ensure("loop")\nawait call(ns, "s1", "y = 1")\nprint(json.dumps(ns))`);
    const session = sshd!.sessionOf(r1.remote_pid);
    expect(session).not.toBeNull();
    process.kill(session!, "SIGKILL");
    expect(await until(() => !isLive(r1.remote_pid))).toBe(true);
    const status = async () => ((await host.status()) as { remote: Array<{ namespace_id: string; state: string }> }).remote.find((n) => n.namespace_id === r1.namespace_id);
    expect(await until(async () => (await status())?.state === "dead")).toBe(true);
    const r2 = await json(
      host,
      `stale = await code_of(call(ns, "s2", "y"))
ns2 = await runtime.remote_ensure("loop")
fresh = await call(ns2, "s3", "'y' in dir()")
print(json.dumps({"stale": stale, "ns2": ns2, "fresh": fresh}))`,
    );
    expect(r2.stale[0]).toBe("scope_expired");
    expect(r2.ns2).toMatchObject({ namespace_id: r1.namespace_id, namespace_generation: "g-2" });
    expect(r2.ns2.remote_pid).not.toBe(r1.remote_pid);
    expect(r2.fresh).toMatchObject({ status: "ok", output: [{ text: "False" }] });
    // kill -9 of the remote worker: the same story.
    process.kill(r2.ns2.remote_pid, "SIGKILL");
    expect(await until(async () => (await status())?.state === "dead")).toBe(true);
    const r3 = await json(host, `print(json.dumps(await code_of(call(ns2, "s4", "1"))))`);
    expect(r3[0]).toBe("scope_expired");
    // The generation's row closes once the supervisor confirmed its whole local tree gone.
    const ends = () =>
      readLog((host as unknown as { sqlite: import("better-sqlite3").Database }).sqlite)
        .filter((e) => e.kind === "remote.generation.end" && e.namespace_id === r1.namespace_id)
        .map((e) => [e.generation, e.end_reason, e.runtime_copied]);
    expect(await until(() => ends().length === 2)).toBe(true);
    // The first test copied the runtime; these generations found it there (warm: one connection).
    expect(ends()).toEqual([
      ["g-1", "worker_exited", false],
      ["g-2", "worker_exited", false],
    ]);
    expect(await until(() => sshd!.descendants().length === 0)).toBe(true);
  });

  test("a remote operation started by a cell that ends without awaiting it is cancelled with the cell", async () => {
    const r = await json(
      host,
      `import asyncio
ns = await runtime.remote_ensure("loop")
task = asyncio.create_task(call(ns, "orphan", "while True:\\n    pass"))
await asyncio.sleep(0.5)
print(json.dumps(ns))`,
    );
    const op = () =>
      readLog((host as unknown as { sqlite: import("better-sqlite3").Database }).sqlite).find(
        (e) => e.kind === "remote.operation" && e.namespace_id === r.namespace_id && e.operation_id === "orphan",
      );
    expect(await until(() => op()?.status === "interrupted")).toBe(true);
    const after = await json(
      host,
      `ns = await runtime.remote_ensure("loop")\nr = await call(ns, "after-orphan", "6 * 7")\nawait runtime.remote_close(ns["namespace_id"], ns["namespace_generation"])\nprint(json.dumps(r))`,
    );
    expect(after).toMatchObject({ status: "ok", output: [{ text: "42" }] });
  });

  test("a wrong host key is a clear unavailable error, and no namespace is left behind", async () => {
    const r = await json(host, `print(json.dumps(await code_of(runtime.remote_ensure("wrongkey"))))`);
    expect(r[0]).toBe("unavailable");
    expect(r[1]).toMatch(/REMOTE_HOST_KEY_MISMATCH/);
    const log = readLog((host as unknown as { sqlite: import("better-sqlite3").Database }).sqlite);
    expect(log.filter((e) => e.kind === "remote.namespace" && e.target === "wrongkey")).toEqual([]);
    expect(await until(() => sshd!.descendants().length === 0)).toBe(true);
  });
});
