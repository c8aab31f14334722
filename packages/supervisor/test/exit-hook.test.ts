import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { exists, noneAlive } from "./helpers.js";

describe("host exit", () => {
  it("kills the trees of workers still alive when the host process exits", () => {
    const script = fileURLToPath(new URL("./fakes/host-exits.ts", import.meta.url));
    const out = execFileSync(process.execPath, ["--import", "tsx", "--conditions=@klbr/source", script], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      encoding: "utf8",
      timeout: 20_000,
    });
    const { pids, dir } = JSON.parse(out.trim().split("\n").at(-1)!) as { pids: number[]; dir: string };
    expect(pids).toHaveLength(3);
    expect(noneAlive(pids)).toBe(true);
    expect(dir).toMatch(/klbr-/);
    expect(exists(dir)).toBe(false);
  });
});
