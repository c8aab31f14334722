import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { startTestSshd } from "../../../test-support/sshd.js";
import { klbrRun } from "./cli-run";
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
    "--python", process.env.KLBR_PYTHON ?? "python3",
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
