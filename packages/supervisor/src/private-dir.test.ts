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
