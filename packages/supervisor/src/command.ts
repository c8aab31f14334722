import { DISPLAY_FLAG } from "./display.js";
import { LIVE_OUTPUT_FLAG } from "./live-output.js";
import { minimalEnv } from "./minimal-env.js";
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
  if (opts.display && opts.role === "workbench") args.push(DISPLAY_FLAG);
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
