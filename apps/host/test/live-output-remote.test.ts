// C16 through C14: a remote cell streams to the host's clients under the local cell that called it.
// Each remote operation's worker numbers its own output from 0; the client sees one stream per
// execution, numbered 0, 1, 2, ... with no gap and no repeat: across the calling cell's own
// prints, several remote operations, and a reconnect (the ssh connection dropped, g-2 started).
// The cell waits on files the test creates only after it saw the output before them.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { isLive, startTestSshd } from "../../../test-support/sshd.js";
import type { LiveOutputEvent } from "../src/cli/live-output";
import type { Host } from "../src/runtime/host";
import { startTestHost, tempDir } from "./helpers";

const { sshd, skip } = await startTestSshd();
if (skip) console.warn(skip);

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.skipIf(!sshd)("a remote cell's live output as the host's clients see it (real sshd on loopback)", () => {
  let host: Host;
  let close: () => Promise<void>;
  let workspace: string;

  beforeAll(async () => {
    const dataDir = tempDir();
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dataDir, "targets.json"), JSON.stringify({ targets: [sshd!.target("loop", join(sshd!.dir, "lw"))] }));
    ({ host, close, workspace } = await startTestHost({ dataDir, interruptGraceMs: 500, sigintGraceMs: 2000 }));
  }, 180_000);
  afterAll(async () => {
    await close?.();
    if (sshd) await until(() => sshd.descendants().length === 0, "the remote trees to end");
    await sshd?.stop();
  }, 180_000);

  test("one execution's stream: its own prints and its remote cells', seq 0, 1, 2, ... across a reconnect", async () => {
    const seen: LiveOutputEvent[] = [];
    const stop = host.liveOutput!.watch({ sessionId: "root" }, (e) => seen.push(e));
    const gate = join(workspace, "after-the-drop");
    const text = () => seen.map((e) => e.text).join("");
    const call = (op: string, code: string) => `await runtime.remote_call(ns["target"], ns["namespace_id"], ns["namespace_generation"], ${JSON.stringify(op)}, "execute", {"code": ${JSON.stringify(code)}})`;
    const cell = host.execute(
      [
        "import asyncio, json, os",
        "print('local 1')",
        'ns = await runtime.remote_ensure("loop")',
        `a = ${call("op-a", "import sys\nprint('remote a1')\nprint('remote a2', file=sys.stderr)")}`,
        `b = ${call("op-b", "print('remote b1')\nprint('remote b2')")}`,
        "print(json.dumps(ns))",
        `while not os.path.exists(${JSON.stringify(gate)}):\n    await asyncio.sleep(0.005)`,
        'ns = await runtime.remote_ensure("loop")',
        `c = ${call("op-c", "print('remote c1 after the reconnect')")}`,
        "print('local 2', ns['namespace_generation'], a['status'], b['status'], c['status'])",
      ].join("\n"),
    );
    // The first generation ran both operations: drop its ssh connection, as a network would.
    await until(() => text().includes('"namespace_generation": "g-1"'), "the cell to print its namespace");
    const ns = JSON.parse(text().split("\n").find((l) => l.startsWith("{"))!) as { namespace_id: string; remote_pid: number };
    const session = sshd!.sessionOf(ns.remote_pid);
    expect(session).not.toBeNull();
    process.kill(session!, "SIGKILL");
    await until(() => !isLive(ns.remote_pid), "the remote worker to end");
    const state = async () => ((await host.status()) as { remote: Array<{ namespace_id: string; state: string }> }).remote.find((n) => n.namespace_id === ns.namespace_id)?.state;
    await until(async () => (await state()) === "dead", "the host to see the generation dead");
    writeFileSync(gate, "");
    const report = await cell;
    stop();
    expect(report.status, JSON.stringify(report)).toBe("ok");
    const mine = seen.filter((e) => e.execution_id === report.id);
    expect(mine).toHaveLength(seen.length);
    // One stream per execution: numbered from 0, each number once, in the order delivered.
    expect(mine.map((e) => e.seq)).toEqual(mine.map((_, i) => i));
    const lines = mine.flatMap((e) => e.text.split("\n").filter(Boolean).map((l) => `${e.stream}:${l}`));
    expect(lines.filter((l) => !l.startsWith("stdout:{"))).toEqual([
      "stdout:local 1",
      "stdout:remote a1",
      "stderr:remote a2",
      "stdout:remote b1",
      "stdout:remote b2",
      "stdout:remote c1 after the reconnect",
      "stdout:local 2 g-2 ok ok ok",
    ]);
    expect(mine.every((e) => e.dropped_bytes === 0 && e.session_id === "root")).toBe(true);
  }, 300_000); // a guard, not a measure: ssh starts, two remote workers and a dead connection on a shared box
});
