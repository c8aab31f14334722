import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { expect, test } from "vitest";
import { postgresMissing, startPostgres } from "../../../test-support/postgres";
import { tsNode } from "./ts-child";

const missing = postgresMissing();
if (missing && process.env.CI) throw new Error(`CI: PostgreSQL must run for the multi-host tests: ${missing}`);

/** Alive and not a zombie (a postmaster that exited waits for pid 1 to reap it). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** Resolves when `done` holds; the deadline only catches a hang. */
async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`still not ${what} after 30 s`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test.skipIf(missing)("stop() leaves no postgres and no directory", async () => {
  const pg = await startPostgres();
  const pid = pg.pid();
  expect(running(pid)).toBe(true);
  await pg.stop();
  expect(existsSync(pg.dir)).toBe(false);
  expect(running(pid)).toBe(false);
});

test.skipIf(missing)("a test process killed with SIGKILL leaves no postgres behind: the watchdog stops it", async () => {
  const { file, args } = tsNode(new URL("./pg-cluster-child.ts", import.meta.url).pathname);
  const child = spawn(file, args, { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`child exited ${code} before starting PostgreSQL`)));
  });
  const { dir, pid } = JSON.parse(line) as { dir: string; pid: number };
  expect(running(pid)).toBe(true);
  child.kill("SIGKILL");
  await until(() => !running(pid) && !existsSync(dir), "stopped and removed");
});
