import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { exists, killAlive, noneAliveWithin } from "./helpers.js";

describe("host exit", () => {
  it("kills the trees of workers still alive when the host process exits, and their tagged orphans", async () => {
    const script = fileURLToPath(new URL("./fakes/host-exits.ts", import.meta.url));
    const out = execFileSync(process.execPath, ["--import", "tsx", "--conditions=@klbr/source", script], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      encoding: "utf8",
      timeout: 20_000,
    });
    const { pids, dir } = JSON.parse(out.trim().split("\n").at(-1)!) as { pids: number[]; dir: string };
    try {
      // the worker, its two children, and an orphan of the worker that init adopted
      expect(pids).toHaveLength(4);
      expect(pids.every((pid) => pid > 0)).toBe(true);
      expect(await noneAliveWithin(pids)).toBe(true);
    } finally {
      killAlive(pids);
    }
    expect(dir).toMatch(/klbr-/);
    expect(exists(dir)).toBe(false);
  });
});
