import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { startTestHost, tempDir } from "./helpers";
import { sleepers } from "./processes";
import { CLI, HOST_DIR } from "./cli-run";

const dataDir = tempDir("klbr-hd-");
const workspace = tempDir("klbr-hw-");
const started: ChildProcess[] = [];

afterAll(() => {
  for (const child of started) child.kill("SIGKILL");
  for (const pid of [...sleepers("2626"), ...sleepers("2727")]) process.kill(Number(pid), "SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

function klbr(args: string[], stdio: "ignore" | "pipe" = "ignore", env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const child = spawn(CLI[0]!, [...CLI.slice(1), "--data-dir", dataDir, "--workspace", workspace, ...args], { cwd: HOST_DIR, stdio: ["ignore", stdio, stdio], env });
  started.push(child);
  return child;
}

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

const privateDirs = (pid: number) => readdirSync(tmpdir()).filter((name) => name.startsWith(`klbr-${pid}-`));

describe("kill -9 of the daemon (issue 10, items 1 and 4)", () => {
  test("its workspace.run commands die with it; the next start removes its temp dirs and kills what carries its tag", async () => {
    const daemon = klbr(["serve"], "pipe");
    let stderr = "";
    daemon.stderr!.on("data", (c) => (stderr += c));
    expect(await until(() => stderr.includes("klbr: serving"), 30_000)).toBe(true);
    // A command in its own session and one in the command's group, both still running.
    klbr(["exec", "await runtime.run(['sh', '-c', 'setsid sleep 2626 & exec sleep 2626'])"]);
    expect(await until(() => sleepers("2626").length === 2, 30_000)).toBe(true);
    const dirs = privateDirs(daemon.pid!);
    expect(dirs.length).toBeGreaterThan(0);

    daemon.kill("SIGKILL");
    expect(await until(() => sleepers("2626").length === 0, 10_000)).toBe(true);
    // Nothing ran the daemon's exit hook: its private dirs are still there.
    expect(dirs.every((name) => existsSync(join(tmpdir(), name)))).toBe(true);

    // Something of the dead run that escaped the guard still carries the run's tag.
    const tag = readFileSync(join(dataDir, "host-tree"), "utf8").trim();
    expect(tag).toMatch(/^[0-9a-f]{32}$/);
    const leftover = spawn("sleep", ["2727"], { env: { PATH: process.env.PATH, KLBR_HOST_TREE: tag }, stdio: "ignore", detached: true });
    leftover.unref();
    expect(await until(() => sleepers("2727").length === 1, 5_000)).toBe(true);

    const next = await startTestHost({ dataDir, workspace });
    try {
      expect(sleepers("2727")).toEqual([]);
      expect(dirs.filter((name) => existsSync(join(tmpdir(), name)))).toEqual([]);
      expect(readFileSync(join(dataDir, "host-tree"), "utf8").trim()).not.toBe(tag);
    } finally {
      await next.host.stop();
    }
  });
});

describe("klbr serve --pass-env (issue 10, item 5)", () => {
  test("names passed with --pass-env and KLBR_PASS_ENV reach the cells; the daemon's other variables do not", async () => {
    const env = { ...process.env, KLBR_T_SECRET: "s", KLBR_T_FLAG: "flag", KLBR_T_LIST: "list", KLBR_PASS_ENV: "KLBR_T_LIST" };
    const daemon = klbr(["serve", "--pass-env", "KLBR_T_FLAG"], "pipe", env);
    let stderr = "";
    daemon.stderr!.on("data", (c) => (stderr += c));
    try {
      expect(await until(() => stderr.includes("klbr: serving"), 30_000)).toBe(true);
      const exec = klbr(["exec", "import os\n[os.environ.get(n) for n in ('KLBR_T_SECRET', 'KLBR_T_FLAG', 'KLBR_T_LIST')]"], "pipe");
      let out = "";
      exec.stdout!.on("data", (c) => (out += c));
      await new Promise((resolve) => exec.once("close", resolve));
      expect(out).toBe("[None, 'flag', 'list']\n");
    } finally {
      daemon.kill("SIGTERM");
      await new Promise((resolve) => daemon.once("exit", resolve));
    }
  });
});
