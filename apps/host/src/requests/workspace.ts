import { realpath, stat } from "node:fs/promises";
import { launcherEnv } from "@klbr/supervisor";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { findProgram } from "../sandbox/find-program";
import { invalidRequest, ReplyError } from "./errors";
import type { RequestContext } from "./context";
import { fitReply } from "./workspace-output";
import { runCommand } from "./workspace-process";
import { HOST_TREE_ENV } from "../runtime/leftovers";

export { fitReply, RUN_REPLY_BUDGET_BYTES } from "./workspace-output";

/** C8 defaults for workspace.run. */
export const RUN_DEFAULT_TIMEOUT_MS = 120_000;
export const RUN_DEFAULT_MAX_OUTPUT_BYTES = 750_000;

/** workspace.info: where commands run and what the workspace is. */
export async function workspaceInfo(ctx: RequestContext): Promise<unknown> {
  return { root: ctx.host.workspace, data_dir: ctx.host.dataDir };
}

/** Resolve `cwd` against the workspace and refuse anything that lands outside it (symlinks included). */
export async function resolveCwd(workspace: string, cwd: string | undefined): Promise<string> {
  const root = await realpath(workspace);
  if (cwd !== undefined && isAbsolute(cwd)) throw invalidRequest(`cwd must be relative to the workspace, got ${JSON.stringify(cwd)}`);
  if (cwd?.includes("\0")) throw invalidRequest(`cwd ${JSON.stringify(cwd)} holds a NUL character`);
  let target: string;
  try {
    target = await realpath(resolve(root, cwd ?? "."));
  } catch {
    throw new ReplyError("not_found", `cwd ${JSON.stringify(cwd)} does not exist in the workspace`);
  }
  const rel = relative(root, target);
  if (rel === ".." || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw invalidRequest(`cwd ${JSON.stringify(cwd)} is outside the workspace`);
  }
  if (!(await stat(target)).isDirectory()) throw invalidRequest(`cwd ${JSON.stringify(cwd)} is not a directory`);
  return target;
}

/**
 * Refuse what no process can be started with: a NUL inside an argument or an environment entry
 * (execve takes C strings), an empty environment name or one holding `=` (it would split into
 * another name and value).
 */
export function checkRunInput(argv: string[], env: Record<string, string> | undefined): void {
  argv.forEach((arg, i) => {
    if (arg.includes("\0")) throw invalidRequest(`argv[${i}] ${JSON.stringify(arg)} holds a NUL character`);
  });
  if (argv[0] === "") throw invalidRequest("argv[0] must name a program, got an empty string");
  for (const [name, value] of Object.entries(env ?? {})) {
    if (name === "") throw invalidRequest("env holds an empty variable name");
    if (name.includes("=")) throw invalidRequest(`env name ${JSON.stringify(name)} holds "="`);
    if (name.includes("\0")) throw invalidRequest(`env name ${JSON.stringify(name)} holds a NUL character`);
    if (value.includes("\0")) throw invalidRequest(`env ${name} value ${JSON.stringify(value)} holds a NUL character`);
  }
}

/** workspace.run: argv without a shell, cwd inside the workspace, minimal env, bounded output and time, tree killed. */
export async function workspaceRun(
  ctx: RequestContext,
  params: { argv: string[]; cwd?: string; env?: Record<string, string>; timeout_ms?: number; max_output_bytes?: number },
): Promise<unknown> {
  checkRunInput(params.argv, params.env);
  const cwd = await resolveCwd(ctx.host.workspace, params.cwd);
  const started = Date.now();
  const file = params.argv[0]!;
  // The cell's env over the same minimal base the workers get (C8, C15); the host's tag stays its own.
  const base = ctx.host.baseEnv();
  const env = { ...base, ...(params.env ?? {}), ...pick(base, HOST_TREE_ENV) };
  // Sandboxed, the command runs behind the workers' bwrap policy, in its own pid namespace.
  const prefix = ctx.host.sandbox.commandPrefix(cwd);
  if (prefix.length > 0 && !findProgram(file, env.PATH, cwd)) {
    throw new ReplyError("not_found", `cannot run ${JSON.stringify(file)}: not found in the workspace or on PATH`);
  }
  const outcome = await runCommand({
    argv: [...prefix, ...params.argv],
    cwd,
    env,
    launcher: launcherEnv(base[HOST_TREE_ENV] !== undefined ? [{ name: HOST_TREE_ENV, value: base[HOST_TREE_ENV] }] : []),
    handoff: prefix.length > 0 ? "bwrap" : "exec",
    timeoutMs: params.timeout_ms ?? RUN_DEFAULT_TIMEOUT_MS,
    maxOutputBytes: params.max_output_bytes ?? RUN_DEFAULT_MAX_OUTPUT_BYTES,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(ctx.host.limitsMechanism ? { limits: ctx.host.limitsMechanism } : {}),
  }).catch((error: Error & { code?: string }) => {
    // The command's limits could not be applied (C17): it does not run at all.
    if (error.code === "LIMITS_UNAVAILABLE") throw new ReplyError("unavailable", `cannot run ${JSON.stringify(file)}: ${error.message}`);
    throw error;
  });
  if (outcome.cancelled && !outcome.timedOut) {
    throw new ReplyError("scope_expired", `execution ${ctx.live.id} ended while ${JSON.stringify(file)} ran; its process tree was killed`);
  }
  if (outcome.spawnError !== null) throw new ReplyError("not_found", `cannot run ${JSON.stringify(file)}: ${outcome.spawnError}`);
  return fitReply({
    exit_code: outcome.exitCode,
    signal: outcome.signal,
    timed_out: outcome.timedOut,
    stdout: outcome.stdout,
    stderr: outcome.stderr,
    truncated_bytes: outcome.truncatedBytes,
    duration_ms: Date.now() - started,
    // A resource limit ended it (C17): which one, and what the mechanism saw.
    ...(outcome.limit ? { limit: outcome.limit.reason, limit_detail: outcome.limit.detail } : {}),
  });
}

function pick(env: Record<string, string>, name: string): Record<string, string> {
  return env[name] === undefined ? {} : { [name]: env[name] };
}
