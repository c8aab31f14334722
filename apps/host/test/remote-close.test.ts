import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startTestSshd } from "../../../test-support/sshd.js";
import type { Host } from "../src/runtime/host";
import { startTestHost, tempDir } from "./helpers";

// remote.close replies only once the remote worker and its tree are gone (issue 25: dropping the
// `await` on the worker's shutdown in remote-service.ts close() passed every other test).

const { sshd, skip } = await startTestSshd();
if (skip) console.warn(skip);

describe.skipIf(!sshd)("remote.close (real sshd on loopback)", () => {
  let host: Host;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const dataDir = tempDir();
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dataDir, "targets.json"), JSON.stringify({ targets: [sshd!.target("loop", join(sshd!.dir, "hw-close"))] }));
    ({ host, close } = await startTestHost({ dataDir, interruptGraceMs: 500, sigintGraceMs: 2000 }));
  });
  afterAll(async () => {
    await close?.();
    await sshd?.stop();
  });

  test("when remote.close replies, the remote worker and every non-sshd process of its session are already gone", async () => {
    // The check runs in the same cell, right after the reply: no polling that a late shutdown could outlast.
    const report = await host.execute(`import json, os
def live(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode("latin1")
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"
def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""
def below(root):
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read().decode("latin1")
        except OSError:
            continue
        kids.setdefault(int(stat[stat.rindex(")") + 2:].split(" ")[1]), []).append(int(name))
    found, stack = [], [root]
    while stack:
        for c in kids.get(stack.pop(), []):
            found.append(c)
            stack.append(c)
    return found
ns = await runtime.remote_ensure("loop")
before = [p for p in below(${sshd?.pid ?? 0}) if live(p) and not comm(p).startswith("sshd")]
closed = await runtime.remote_close(ns["namespace_id"], ns["namespace_generation"])
left = [[p, comm(p)] for p in below(${sshd?.pid ?? 0}) if live(p) and not comm(p).startswith("sshd")]
print(json.dumps({"ns": ns, "closed": closed, "before": before, "worker_live": live(ns["remote_pid"]), "left": left}))`);
    expect(report.status, JSON.stringify(report)).toBe("ok");
    const r = JSON.parse(report.output.filter((o) => o.stream === "stdout").map((o) => o.text).join(""));
    expect(r.closed).toMatchObject({ status: "closed" });
    expect(r.before, "the remote worker ran under sshd before the close").toContain(r.ns.remote_pid);
    expect(r.worker_live, "remote.close replied while the remote worker still ran").toBe(false);
    expect(r.left, "remote.close replied while processes of the remote session still ran").toEqual([]);
  });
});
