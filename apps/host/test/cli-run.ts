import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** apps/host. */
export const HOST_DIR = fileURLToPath(new URL("..", import.meta.url));
/**
 * The klbr binary. Tests run it from source (they must not need dist/): the vitest global setup
 * bundles the CLI from source once per run (cli-bundle.ts) and names the bundle in
 * KLBR_TEST_CLI_BUNDLE; a test file run some other way falls back to tsx, which compiles every
 * module at each start. KLBR_TEST_BUILT=1 runs the built bin/klbr.js instead (after `pnpm build`):
 * what users run, for long local loops such as KLBR_KILL9_ROUNDS=200.
 */
export const CLI = process.env.KLBR_TEST_BUILT === "1"
  ? [process.execPath, join(HOST_DIR, "bin", "klbr.js")]
  : process.env.KLBR_TEST_CLI_BUNDLE
    ? [process.execPath, process.env.KLBR_TEST_CLI_BUNDLE]
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
