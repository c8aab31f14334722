// pnpm bench (apps/host): remote.call of `1+1` from a cell, through the host and ssh on loopback,
// beside a local execute of `1+1`, a plain host request round trip (runtime.inspect) and
// `ssh host true`, all in this one run. Needs sshd (test-support/sshd.ts); says why when it cannot.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sshRun, parseTarget } from "@klbr/remote";
import { startTestSshd } from "../../../test-support/sshd.js";
import { Host } from "../src/runtime/host";

const { sshd, skip } = await startTestSshd();
if (!sshd) {
  console.log(`remote bench skipped: ${skip}`);
  process.exit(0);
}
const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
const line = (name: string, value: number, base?: [string, number]) =>
  console.log(`${name.padEnd(46)} p50 ${value.toFixed(3)} ms${base ? `   ${base[0]} ${base[1].toFixed(3)} ms  x${(value / base[1]).toFixed(2)}` : ""}`);

const dataDir = mkdtempSync("/tmp/klbr-rb-");
const workspace = mkdtempSync("/tmp/klbr-rbw-");
const target = sshd.target("bench", join(sshd.dir, "hb"));
writeFileSync(join(dataDir, "targets.json"), JSON.stringify({ targets: [target] }));
const host = await Host.start({ dataDir, workspace, builtinSkillsDir: join(workspace, "skills") });
try {
  const ssh: number[] = [];
  for (let i = 0; i < 8; i++) {
    const t = performance.now();
    await sshRun(parseTarget(target), "true");
    ssh.push(performance.now() - t);
  }
  const local: number[] = [];
  for (let i = 0; i < 220; i++) {
    const t = performance.now();
    await host.execute("1+1");
    if (i >= 20) local.push(performance.now() - t);
  }
  // One cell times its own requests (perf_counter around each await), so only the request path counts.
  const report = await host.execute(`import time, json
ns = await runtime.remote_ensure("bench")
args = (ns["target"], ns["namespace_id"], ns["namespace_generation"])
remote, inspect = [], []
for i in range(60):  # 2 requests each: with ensure and close, 122 of a cell's 128
    t = time.perf_counter(); await runtime.remote_call(*args, f"op-{i}", "execute", {"code": "1+1"}); remote.append(time.perf_counter() - t)
    t = time.perf_counter(); await runtime.inspect(); inspect.append(time.perf_counter() - t)
await runtime.remote_close(ns["namespace_id"], ns["namespace_generation"])
print(json.dumps({"remote": [x * 1000 for x in remote[10:]], "inspect": [x * 1000 for x in inspect[10:]]}))`);
  if (report.status !== "ok") throw new Error(`the bench cell failed: ${JSON.stringify(report)}`);
  const out = JSON.parse(report.output.filter((o) => o.stream === "stdout").map((o) => o.text).join("")) as { remote: number[]; inspect: number[] };
  console.log("remote.call through the host and ssh on 127.0.0.1 (this run)");
  line("ssh host true", median(ssh));
  line("local execute 1+1 (host.execute)", median(local));
  line("host request round trip (runtime.inspect)", median(out.inspect));
  line("remote.call 1+1 from a cell", median(out.remote), ["local execute", median(local)]);
  line("remote.call - local execute", median(out.remote) - median(local), ["ssh host true", median(ssh)]);
} finally {
  await host.stop();
  await sshd.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
}
