import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** apps/host. */
export const HOST_DIR = fileURLToPath(new URL("..", import.meta.url));
/**
 * The klbr binary, run from source (tests must not need dist/). KLBR_TEST_BUILT=1 runs the built
 * bin/klbr.js instead (after `pnpm build`): what users run, and a start without tsx's compile,
 * for long local loops such as KLBR_KILL9_ROUNDS=200.
 */
export const CLI = process.env.KLBR_TEST_BUILT === "1"
  ? [process.execPath, join(HOST_DIR, "bin", "klbr.js")]
  : [process.execPath, "--conditions=@klbr/source", "--import", "tsx", join(HOST_DIR, "test", "run-cli.ts")];

/** One finished klbr process. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run klbr with these arguments to completion. */
export function klbrRun(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<Run> {
  return collect(spawn(CLI[0]!, [...CLI.slice(1), ...args], { cwd: opts.cwd ?? HOST_DIR, env: opts.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] }), opts.input);
}

/** Run a shell command line in which `KLBR` is replaced by the klbr binary (for pipes). */
export function klbrShell(line: string, opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<Run> {
  const klbr = CLI.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  return collect(spawn("sh", ["-c", line.replaceAll("KLBR", klbr)], { cwd: opts.cwd ?? HOST_DIR, env: opts.env ?? process.env, stdio: ["pipe", "pipe", "pipe"] }));
}

function collect(child: ReturnType<typeof spawn>, input?: string): Promise<Run> {
  return new Promise((resolve) => {
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (c) => (stdout += c));
    child.stderr!.on("data", (c) => (stderr += c));
    child.stdin!.end(input ?? "");
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}
