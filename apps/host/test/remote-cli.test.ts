import { spawn, type ChildProcess } from "node:child_process";
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { isLive, startTestSshd } from "../../../test-support/sshd.js";
import { CLI, HOST_DIR, klbrRun } from "./cli-run";
import { tempDir } from "./helpers";

const { sshd, skip } = await startTestSshd();
if (skip) console.warn(skip);
const dataDir = tempDir();

afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await sshd?.stop();
});

describe.skipIf(!sshd)("klbr target add|list|remove|test", () => {
  const klbr = (...args: string[]) => klbrRun(["-d", dataDir, "target", ...args]);
  const addArgs = (name: string, knownHosts: string) => [
    "add", name, "--host", "127.0.0.1", "--port", String(sshd!.port), "--user", sshd!.user,
    "--identity", sshd!.identityFile, "--known-hosts", knownHosts, "--workdir", join(sshd!.dir, "cw"),
    "--python", sshd!.target("x").python,
  ];

  test("add writes the C14 entry (0600); a second add of the name is refused", async () => {
    expect((await klbr(...addArgs("loop", sshd!.knownHosts))).code).toBe(0);
    const list = await klbr("list", "--json");
    expect(JSON.parse(list.stdout)).toEqual({ targets: [sshd!.target("loop", join(sshd!.dir, "cw"))] });
    expect(statSync(join(dataDir, "targets.json")).mode & 0o777).toBe(0o600);
    const again = await klbr(...addArgs("loop", sshd!.knownHosts));
    expect(again.code).toBe(65);
    expect(again.stderr).toMatch(/REMOTE_TARGET_EXISTS/);
  });

  test("test connects, checks the remote python and reports the round trip", async () => {
    const run = await klbr("test", "loop", "--json");
    expect(run.code, run.stderr).toBe(0);
    const probe = JSON.parse(run.stdout);
    expect(probe).toMatchObject({ target: "loop", python_ok: true });
    expect(probe.python).toMatch(/^3\.\d+\.\d+$/);
    expect(probe.round_trip_ms).toBeGreaterThan(0);
  });

  test("a wrong host key and an unknown target are clear errors", async () => {
    expect((await klbr(...addArgs("wrongkey", sshd!.wrongKnownHosts))).code).toBe(0);
    const wrong = await klbr("test", "wrongkey");
    expect(wrong.code).toBe(69);
    expect(wrong.stderr).toMatch(/REMOTE_HOST_KEY_MISMATCH/);
    const missing = await klbr("test", "absent");
    expect(missing.code).toBe(65);
    expect(missing.stderr).toMatch(/REMOTE_TARGET_NOT_FOUND/);
  });

  test("remove takes the target out", async () => {
    expect((await klbr("remove", "wrongkey")).code).toBe(0);
    expect((await klbr("remove", "loop")).code).toBe(0);
    expect(JSON.parse((await klbr("list", "--json")).stdout)).toEqual({ targets: [] });
    expect((await klbr("remove", "loop")).code).toBe(65);
  });
});

/** Poll until `check` holds (bounded generously: this box is shared). */
async function until(check: () => boolean, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}

/** `klbr serve` on the test data directory, once its control socket answers. */
async function serve(workspace: string): Promise<ChildProcess> {
  const child = spawn(CLI[0]!, [...CLI.slice(1), "-d", dataDir, "-w", workspace, "serve"], { cwd: HOST_DIR, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (c) => (stderr += c));
  if (!(await until(() => stderr.includes("klbr: serving") || child.exitCode !== null, 60_000)) || child.exitCode !== null) {
    throw new Error(`serve did not start: ${stderr}`);
  }
  return child;
}

describe.skipIf(!sshd)("a daemon with a remote namespace", () => {
  test("status shows it; kill -9 of the daemon leaves no process on either side; the restart ends the generation host_restart", async () => {
    const workspace = tempDir("klbr-rw-");
    const add = await klbrRun(["-d", dataDir, "target", "add", "loop", "--host", "127.0.0.1", "--port", String(sshd!.port), "--user", sshd!.user,
      "--identity", sshd!.identityFile, "--known-hosts", sshd!.knownHosts, "--workdir", join(sshd!.dir, "dw"), "--python", sshd!.target("x").python, "--replace"]);
    expect(add.code, add.stderr).toBe(0);
    let daemon = await serve(workspace);
    try {
      const run = await klbrRun(["-d", dataDir, "exec", "--json", "ns = await runtime.remote_ensure('loop')\nns['remote_pid']"]);
      expect(run.code, run.stderr).toBe(0);
      const remotePid = Number(JSON.parse(run.stdout).output[0].text);
      expect(isLive(remotePid)).toBe(true);
      const status = JSON.parse((await klbrRun(["-d", dataDir, "status", "--json"])).stdout);
      expect(status.remote).toEqual([expect.objectContaining({ target: "loop", session_id: "root", generation: "g-1", state: "ready", remote_pid: remotePid })]);
      const text = await klbrRun(["-d", dataDir, "status"]);
      expect(text.stdout).toMatch(new RegExp(`remote +\\S+ root loop g-1 ready remote pid ${remotePid}`));
      daemon.kill("SIGKILL");
      expect(await until(() => !isLive(remotePid))).toBe(true);
      expect(await until(() => sshd!.descendants().length === 0)).toBe(true);
      daemon = await serve(workspace);
      const log = (await klbrRun(["-d", dataDir, "log", "--json"])).stdout.trim().split("\n").map((l) => JSON.parse(l));
      expect(log.filter((e) => e.kind === "remote.generation.end")).toEqual([expect.objectContaining({ generation: "g-1", remote_pid: remotePid, end_reason: "host_restart" })]);
    } finally {
      daemon.kill("SIGTERM");
      await until(() => daemon.exitCode !== null || daemon.signalCode !== null);
      rmSync(workspace, { recursive: true, force: true });
    }
  }, 120_000);
});
