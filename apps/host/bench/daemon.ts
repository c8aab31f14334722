// The `klbr serve` the socket benches (sessions, spare) measure: the built bin, or another build's
// (KLBR_BENCH_BIN, e.g. main's) to compare against in the same run.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const HOST_DIR = fileURLToPath(new URL("..", import.meta.url));
export const BIN = process.env.KLBR_BENCH_BIN ?? join(HOST_DIR, "bin", "klbr.js");

/** `klbr serve --no-drive` on `dataDir` (of `bin`, default {@link BIN}, in `env`), resolved once it says it is serving. */
export async function startDaemon(dataDir: string, args: string[], bin = BIN, env: NodeJS.ProcessEnv = process.env): Promise<ChildProcess> {
  // KLBR_BENCH_NODE_ARGS: flags for the daemon's node (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  const nodeArgs = (process.env.KLBR_BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const daemon = spawn(process.execPath, [...nodeArgs, bin, "--data-dir", dataDir, "serve", "--no-drive", ...args], { stdio: ["ignore", "ignore", "pipe"], env });
  let err = "";
  await new Promise<void>((resolve, reject) => {
    daemon.stderr!.on("data", (c: Buffer) => {
      err += c.toString();
      if (err.includes("serving")) resolve();
    });
    daemon.once("exit", (code) => reject(new Error(`klbr serve exited ${code}: ${err}`)));
  });
  return daemon;
}

/** One of several hosts on a shared log (the failover benches), with its exit awaitable. */
export interface SharedHost {
  child: ChildProcess;
  dataDir: string;
  exited: Promise<void>;
}

/**
 * `klbr serve --no-drive --spare 0` of the built bin on `dataDir`, one of several on the log that
 * `log` names (`--sqlite-file FILE` or `--database URL`), kept in `children` until it exits;
 * resolved once it serves.
 */
export async function startSharedHost(opts: { dataDir: string; workspace: string; log: string[]; lease: string; children: Set<ChildProcess> }): Promise<SharedHost> {
  const { dataDir, children } = opts;
  const child = spawn(process.execPath, [BIN, "--data-dir", dataDir, "--workspace", opts.workspace, "serve", "--no-drive", "--spare", "0", ...opts.log, "--lease", opts.lease], { stdio: ["ignore", "ignore", "pipe"] });
  children.add(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => (children.delete(child), resolve())));
  let err = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (c: Buffer) => ((err += c.toString()), err.includes("klbr: serving") && resolve()));
    void exited.then(() => reject(new Error(`serve exited: ${err}`)));
  });
  return { child, dataDir, exited };
}
