import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Host } from "../src/runtime/host";
import type { HostOptions } from "../src/runtime/host-options";

/** A short temporary directory (Unix socket paths must stay under 108 bytes). */
export function tempDir(prefix = "klbr-h-"): string {
  return mkdtempSync(join("/tmp", prefix));
}

/**
 * `rm -rf` that works for a normal user too: a data directory's release snapshots are read-only
 * (directories 0555), which only root can empty without making them writable first.
 */
export function removeTree(dir: string): void {
  const open = (path: string): void => {
    try {
      if (!lstatSync(path).isDirectory()) return;
      chmodSync(path, 0o700);
      for (const name of readdirSync(path)) open(join(path, name));
    } catch {
      // gone, or not ours: rmSync says so if it matters
    }
  };
  open(dir);
  rmSync(dir, { recursive: true, force: true });
}

/** Start a host on a fresh data directory and workspace; `close` stops it and removes both. */
export async function startTestHost(options: Partial<HostOptions> = {}): Promise<{ host: Host; dataDir: string; workspace: string; close: () => Promise<void> }> {
  const dataDir = options.dataDir ?? tempDir();
  const workspace = options.workspace ?? tempDir("klbr-w-");
  const host = await Host.start({ dataDir, workspace, builtinSkillsDir: join(workspace, "skills"), ...options });
  return {
    host,
    dataDir,
    workspace,
    close: async () => {
      await host.stop();
      removeTree(dataDir);
      removeTree(workspace);
    },
  };
}

/** The text of a cell's result record. */
export function resultOf(report: { output: Array<{ stream: string; text: string }> }): string | undefined {
  return report.output.find((o) => o.stream === "result")?.text;
}

/**
 * Run `code` in a session's workbench; its last line is an awaitable expression whose value comes
 * back parsed from JSON, or the host error it raised as {"error": code, "message": ...}.
 */
export async function callInCell(host: Host, session: string, code: string): Promise<any> {
  const lines = code.trim().split("\n");
  const last = lines.pop()!;
  const cell = [
    "import json as _json",
    ...lines,
    "try:",
    `    _v = ${last}`,
    "except Exception as _e:",
    "    _v = {'error': getattr(_e, 'code', type(_e).__name__), 'message': str(_e)}",
    "print(_json.dumps(_v))",
  ].join("\n");
  const report = await host.execute(cell, session);
  if (report.status !== "ok") throw new Error(`cell in ${session} ended ${report.status}: ${report.error ?? JSON.stringify(report.failure)}`);
  const out = report.output.filter((o) => o.stream === "stdout").map((o) => o.text).join("");
  return JSON.parse(out.trim().split("\n").at(-1)!);
}

/** Resolve once `check` holds, polling the host's own state (no wall-clock margin to outlast). */
export async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 5));
}
