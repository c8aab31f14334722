import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Host, type HostOptions } from "../src/runtime/host";

/** A short temporary directory (Unix socket paths must stay under 108 bytes). */
export function tempDir(prefix = "klbr-h-"): string {
  return mkdtempSync(join("/tmp", prefix));
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
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

/** The text of a cell's result record. */
export function resultOf(report: { output: Array<{ stream: string; text: string }> }): string | undefined {
  return report.output.find((o) => o.stream === "result")?.text;
}
