import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isSupervisorError } from "./errors.js";
import { checkSocketPath, makePrivateDir, removePrivateDir } from "./private-dir.js";

describe("private dir", () => {
  it("is a 0700 directory and removal deletes it", async () => {
    const { dir, socketPath } = await makePrivateDir();
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
    expect(socketPath).toBe(join(dir, "w.sock"));
    await removePrivateDir(dir);
    await expect(stat(dir)).rejects.toThrow();
  });

  it("counts bytes, not characters, in the socket path", () => {
    expect(() => checkSocketPath("/" + "a".repeat(106))).not.toThrow();
    let caught: unknown;
    try {
      checkSocketPath("/" + "é".repeat(54));
    } catch (err) {
      caught = err;
    }
    expect(isSupervisorError(caught) && caught.code).toBe("WORKER_SOCKET_PATH_TOO_LONG");
  });

  it("refuses a base so deep the socket path would not fit, and leaves nothing behind", async () => {
    const base = await mkdtemp(join(tmpdir(), "klbr-deep-"));
    const deep = join(base, "x".repeat(110));
    await import("node:fs/promises").then((fs) => fs.mkdir(deep));
    await expect(makePrivateDir(deep)).rejects.toMatchObject({ code: "WORKER_SOCKET_PATH_TOO_LONG" });
    const { readdir } = await import("node:fs/promises");
    expect(await readdir(deep)).toEqual([]);
    await rm(base, { recursive: true, force: true });
  });
});

describe("sweepPrivateDirs", () => {
  it("removes the klbr-<pid>-XXXXXX dirs of dead owners and keeps the rest", async () => {
    const { sweepPrivateDirs } = await import("./private-dir.js");
    const { mkdir, readdir } = await import("node:fs/promises");
    const { spawnSync } = await import("node:child_process");
    const base = await mkdtemp(join(tmpdir(), "klbr-sw-"));
    const dead = spawnSync("true").pid!; // exited and reaped: its pid names no process now
    const names = [`klbr-${dead}-abc123`, `klbr-1-abc123`, `klbr-abc123`, `klbr-${dead}-x`, "other"];
    for (const name of names) await mkdir(join(base, name));
    const own = await makePrivateDir(base);
    const removed = await sweepPrivateDirs(base);
    expect(removed).toEqual([join(base, `klbr-${dead}-abc123`)]);
    expect((await readdir(base)).sort()).toEqual([`klbr-1-abc123`, `klbr-abc123`, `klbr-${dead}-x`, "other", own.dir.slice(base.length + 1)].sort());
    expect(own.dir).toMatch(new RegExp(`/klbr-${process.pid}-[A-Za-z0-9]{6}$`));
    await rm(base, { recursive: true, force: true });
  });
});
