// What the web view's browser test and bench share: the front end built from source into a
// directory of the run's own, and `klbr serve --web` started from source with its URL read from
// the first line of its stdout (C23).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { CLI, HOST_DIR } from "./cli-run";

/** Build apps/web into `outdir` with its own build script (esbuild), as `pnpm build` does. */
export function buildWebAssets(outdir: string): string {
  const r = spawnSync(process.execPath, [join(HOST_DIR, "..", "web", "build.mjs"), outdir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`apps/web build failed: ${r.stdout}${r.stderr}`);
  return outdir;
}

/** A running `klbr serve --web` (or `klbr web`): the process, the URL it printed first, its output so far. */
export interface WebDaemon {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
}

/** Start `klbr <args>` and resolve once its first stdout line (the URL) is out, and `readyLine` on stderr when given. */
export function startWebDaemon(args: string[], env: NodeJS.ProcessEnv, readyLine?: string): Promise<WebDaemon> {
  const child = spawn(CLI[0]!, [...CLI.slice(1), ...args], { cwd: HOST_DIR, stdio: ["ignore", "pipe", "pipe"], env });
  let stdout = "";
  let stderr = "";
  return new Promise((resolve, reject) => {
    const check = () => {
      const nl = stdout.indexOf("\n");
      if (nl >= 0 && (readyLine === undefined || stderr.includes(readyLine))) resolve({ child, url: stdout.slice(0, nl), stdout: () => stdout, stderr: () => stderr });
    };
    child.stdout!.on("data", (c) => {
      stdout += c;
      check();
    });
    child.stderr!.on("data", (c) => {
      stderr += c;
      check();
    });
    child.once("exit", (code) => reject(new Error(`klbr ${args.join(" ")} exited ${code} before it was ready:\n${stdout}\n${stderr}`)));
  });
}
