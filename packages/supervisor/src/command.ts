import { LIVE_OUTPUT_FLAG } from "./live-output.js";
import type { StartWorkerOptions } from "./options.js";
import { resolvePython } from "./python.js";
import type { TreeTag } from "./tagged.js";

/** The environment variable carrying the startup token (C3). */
export const TOKEN_ENV = "KLBR_WORKER_TOKEN";

/** What to spawn for one worker. */
export interface WorkerCommand {
  file: string;
  args: string[];
  /** The worker's whole environment (never the host's: C15). */
  env: Record<string, string>;
}

/** The names of the C15 minimal base environment (plus every `LC_*`). */
export const MINIMAL_ENV_NAMES = ["PATH", "HOME", "LANG", "TZ", "TMPDIR"] as const;

const DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin";

/**
 * The C15 minimal base environment taken from `hostEnv`: PATH (a default when unset), HOME, LANG,
 * every LC_*, TZ, TMPDIR, and the names the operator passes explicitly (`passEnv`). Nothing else
 * of the host's environment (secrets set for the daemon) reaches what the host starts.
 */
export function minimalEnv(passEnv: readonly string[] = [], hostEnv: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = { PATH: hostEnv.PATH ?? DEFAULT_PATH };
  for (const [name, value] of Object.entries(hostEnv)) {
    if (value === undefined) continue;
    if ((MINIMAL_ENV_NAMES as readonly string[]).includes(name) || name.startsWith("LC_") || passEnv.includes(name)) env[name] = value;
  }
  return env;
}

/**
 * The worker's argv and environment: `command` (default `<python> -m klbr.worker`) followed by
 * the socket, role and identity flags, `--skills` and `--source` when given; the token in
 * KLBR_WORKER_TOKEN; the generation's tree tag (KLBR_TREE), which every descendant inherits;
 * `pythonPath` prepended to PYTHONPATH; all of it over {@link minimalEnv}, never the host's whole
 * environment. Neither the token nor the tag can be set through `env`.
 * With a `transport`, the worker is given the transport's socket path and its argv is wrapped;
 * the token is then left out of the environment (it is written on stdin).
 */
export function workerCommand(
  opts: StartWorkerOptions,
  socketPath: string,
  token: string,
  tree: TreeTag,
  skillsFile: string | undefined,
  hostEnv: NodeJS.ProcessEnv = process.env,
): WorkerCommand {
  const [file, ...base] = opts.command ?? [resolvePython(), "-m", "klbr.worker"];
  if (!file) throw new RangeError(`command must name a program, got ${JSON.stringify(opts.command)}`);
  const transport = opts.transport;
  // A spare learns its identity on stdin (see spare.ts), so its first envelope already names it.
  const identity = opts.spare === true ? ["--identity-stdin"] : ["--session", opts.sessionId, "--generation", opts.generation];
  const args = [...base, "--socket", transport?.socketPath ?? socketPath, "--role", opts.role, ...identity];
  if (skillsFile !== undefined) args.push("--skills", skillsFile);
  if (opts.sourceDir !== undefined) args.push("--source", opts.sourceDir);
  if (opts.liveOutput && opts.role === "workbench") args.push(LIVE_OUTPUT_FLAG);
  const baseEnv = minimalEnv(opts.passEnv, hostEnv);
  const pythonPath = [...(opts.pythonPath ?? [])];
  const inherited = opts.env?.PYTHONPATH ?? baseEnv.PYTHONPATH;
  if (inherited) pythonPath.push(inherited);
  const env: Record<string, string> = { ...baseEnv, ...opts.env, [TOKEN_ENV]: token, [tree.name]: tree.value };
  if (pythonPath.length > 0) env.PYTHONPATH = pythonPath.join(":");
  if (!transport) return { file, args, env };
  // The token travels on stdin (see WorkerTransport), never in the environment of the command.
  delete env[TOKEN_ENV];
  const [wrapped, ...wrappedArgs] = transport.wrap([file, ...args], socketPath);
  if (!wrapped) throw new RangeError("transport.wrap must return a program");
  return { file: wrapped, args: wrappedArgs, env };
}
