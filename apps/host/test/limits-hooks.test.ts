import { chmodSync, cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { snapshotRelease } from "@klbr/activation";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type Database from "better-sqlite3";
import { defaultPythonDir } from "../src/paths";
import type { Host } from "../src/runtime/host";
import { readLog } from "../src/store/log-view";
import { startTestHost } from "./helpers";

// Issue 38, item 2 for the hooks worker (C17: the limits apply to every workbench and hooks
// worker). A release whose hooks module leaves a thread that allocates past memory=128MiB after
// its worker started: no invoke is running, so no outcome can name the limit. An incident does
// (workbench.limit, role hooks), and the replacement's hooks.restart gives the limit as its reason.

type HooksStatus = { hooks: { generation: string; state: string; revision: string } | null };

const sqliteOf = (host: Host) => (host as unknown as { sqlite: Database.Database }).sqlite;
const hooksOf = async (host: Host) => ((await host.status()) as HooksStatus).hooks!;

/** Resolves true once the hooks worker of `generation` is dead or replaced (bounded). */
async function hooksDeadWithin(host: Host, generation: string, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const hooks = await hooksOf(host);
    if (hooks.generation !== generation || hooks.state === "dead") return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("a limit that ends the hooks worker between invokes (memory=128MiB)", () => {
  let host: Host;
  let workspace: string;
  let dataDir: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ host, workspace, dataDir, close } = await startTestHost({ limits: ["memory=128MiB"] }));
  });
  afterAll(async () => {
    await close();
  });

  /** Activate a copy of the default hooks with `extra` appended to defaults.py; its worker is the active one. */
  async function activateWith(name: string, extra: string[]): Promise<{ digest: string; generation: string }> {
    const draft = join(workspace, name);
    cpSync(join(defaultPythonDir(), "klbr_hooks"), draft, { recursive: true, filter: (src) => !src.includes("__pycache__") });
    for (const f of readdirSync(draft)) chmodSync(join(draft, f), 0o644);
    writeFileSync(join(draft, "defaults.py"), `${readFileSync(join(draft, "defaults.py"), "utf8")}\n${extra.join("\n")}\n`);
    const release = snapshotRelease(draft, join(dataDir, "releases"));
    await host.hooks.activate(release.path, host.hooks.info()!.epoch);
    const active = await hooksOf(host);
    expect(active.revision).toBe(release.digest);
    return { digest: release.digest, generation: active.generation };
  }

  test("an incident names memory_limit and the hooks worker's generation; the restart's reason is memory_limit", async () => {
    // Only the first worker on this release starts the thread (the marker is in the workspace),
    // so the replacement lives.
    const marker = join(workspace, "hog-started");
    const release = await activateWith("hog-release", [
      "import os as _os, threading as _threading, time as _time",
      "def _hog():",
      "    _time.sleep(2)",
      "    _kept = [bytearray(1 << 20) for _ in range(300)]",
      "    _time.sleep(30)",
      `if not _os.path.exists(${JSON.stringify(marker)}):`,
      `    open(${JSON.stringify(marker)}, "w").close()`,
      "    _threading.Thread(target=_hog, daemon=True).start()",
    ]);
    const dying = await hooksOf(host);
    expect(existsSync(marker)).toBe(true);
    expect(await hooksDeadWithin(host, dying.generation, 30_000)).toBe(true);

    // The next invoke finds it dead and replaces it on the same release; the hook answers.
    const input = await host.postInput("after the limit");
    expect((input.attention as { hook: Record<string, unknown> }).hook).not.toHaveProperty("unavailable");
    const log = readLog(sqliteOf(host));
    const limits = log.filter((e) => e.kind === "incident.workbench.limit");
    expect(limits).toHaveLength(1);
    expect(limits[0]).toMatchObject({
      detail: { role: "hooks", revision: release.digest, generation: dying.generation, reason: "memory_limit", between_cells: true, detail: expect.stringContaining("memory") },
    });
    expect(log.filter((e) => e.kind === "incident.hooks.restart").at(-1)).toMatchObject({ detail: { revision: release.digest, reason: "memory_limit" } });
    const after = await hooksOf(host);
    expect(after).toMatchObject({ revision: release.digest, state: "ready" });
    expect(after.generation).not.toBe(dying.generation);
  }, 90_000);

  test("a limit inside an invoke fails that invoke naming it, and is no incident between invokes", async () => {
    // The hook allocates past the limit once, when the marker is there (removed first, so the
    // replacement answers).
    const marker = join(workspace, "allocate-in-the-hook");
    const release = await activateWith("hog-in-invoke", [
      "import os as _os",
      "_attention = attention",
      "def attention(request, context):",
      `    if _os.path.exists(${JSON.stringify(marker)}):`,
      `        _os.unlink(${JSON.stringify(marker)})`,
      "        _kept = [bytearray(1 << 20) for _ in range(300)]",
      "    return _attention(request, context)",
    ]);
    const before = readLog(sqliteOf(host)).filter((e) => e.kind === "incident.workbench.limit").length;
    writeFileSync(marker, "");
    const failed = await host.postInput("allocates in the hook");
    expect((failed.attention as { hook: { unavailable?: string } }).hook.unavailable).toContain("memory_limit");
    const next = await host.postInput("after it");
    expect((next.attention as { hook: Record<string, unknown> }).hook).not.toHaveProperty("unavailable");
    const log = readLog(sqliteOf(host));
    expect(log.filter((e) => e.kind === "incident.workbench.limit")).toHaveLength(before);
    expect(log.filter((e) => e.kind === "incident.hooks.restart").at(-1)).toMatchObject({ detail: { revision: release.digest, reason: "memory_limit" } });
  }, 90_000);
});
