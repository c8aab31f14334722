import { realpath, stat } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import { killTree } from "@klbr/supervisor";
import { execa } from "execa";
import { invalidRequest, ReplyError } from "./errors";
import type { RequestContext } from "./context";

/** C8 defaults for workspace.run. */
export const RUN_DEFAULT_TIMEOUT_MS = 120_000;
export const RUN_DEFAULT_MAX_OUTPUT_BYTES = 750_000;

/** The environment a command starts from: minimal, never the host's (C8). */
export function baseRunEnv(): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    LANG: "C.UTF-8",
    LC_ALL: "C.UTF-8",
  };
}

/** workspace.info: where commands run and what the workspace is. */
export async function workspaceInfo(ctx: RequestContext): Promise<unknown> {
  return { root: ctx.host.workspace, data_dir: ctx.host.dataDir };
}

/** Resolve `cwd` against the workspace and refuse anything that lands outside it (symlinks included). */
export async function resolveCwd(workspace: string, cwd: string | undefined): Promise<string> {
  const root = await realpath(workspace);
  if (cwd !== undefined && isAbsolute(cwd)) throw invalidRequest(`cwd must be relative to the workspace, got ${JSON.stringify(cwd)}`);
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

/** A byte-bounded sink: keeps the first `limit` bytes in all, counts the rest. */
class BoundedOutput {
  readonly chunks: Buffer[] = [];
  kept = 0;
  dropped = 0;
  constructor(private readonly budget: { left: number }) {}
  push(chunk: Buffer): void {
    const take = Math.min(chunk.length, this.budget.left);
    if (take > 0) {
      this.chunks.push(chunk.subarray(0, take));
      this.budget.left -= take;
      this.kept += take;
    }
    this.dropped += chunk.length - take;
  }
  /** The kept bytes as text, cut back to a character boundary; the cut bytes are counted. */
  text(): string {
    const buf = Buffer.concat(this.chunks);
    let end = buf.length;
    // Walk back over a trailing partial UTF-8 sequence so the reply never holds half a character.
    let lead = end - 1;
    while (lead >= 0 && end - lead <= 4 && (buf[lead]! & 0xc0) === 0x80) lead--;
    if (lead >= 0) {
      const b = buf[lead]!;
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
      if (end - lead < need) end = lead;
    }
    this.dropped += buf.length - end;
    return buf.subarray(0, end).toString("utf8");
  }
}

/** Kill a process group and ignore "already gone". */
function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    /* the group is already gone */
  }
}

/** workspace.run: argv without a shell, cwd inside the workspace, minimal env, bounded output, tree killed on timeout. */
export async function workspaceRun(
  ctx: RequestContext,
  params: { argv: string[]; cwd?: string; env?: Record<string, string>; timeout_ms?: number; max_output_bytes?: number },
): Promise<unknown> {
  const cwd = await resolveCwd(ctx.host.workspace, params.cwd);
  const timeoutMs = params.timeout_ms ?? RUN_DEFAULT_TIMEOUT_MS;
  const budget = { left: params.max_output_bytes ?? RUN_DEFAULT_MAX_OUTPUT_BYTES };
  const stdout = new BoundedOutput(budget);
  const stderr = new BoundedOutput(budget);
  const started = Date.now();
  const [file, ...args] = params.argv;
  const child = execa(file!, args, {
    cwd,
    env: { ...baseRunEnv(), ...(params.env ?? {}) },
    extendEnv: false,
    stdin: "ignore",
    buffer: false,
    reject: false,
    detached: true,
    encoding: "buffer",
  });
  child.stdout?.on("data", (c: Buffer) => stdout.push(c));
  child.stderr?.on("data", (c: Buffer) => stderr.push(c));
  let timedOut = false;
  let treeKilled: Promise<unknown> | null = null;
  // Walk the tree before killing (a setsid grandchild leaves the group but not the tree).
  const kill = () => void (treeKilled ??= child.pid ? killTree(child.pid) : Promise.resolve());
  const timer = setTimeout(() => {
    timedOut = true;
    kill();
  }, timeoutMs);
  // The cell ended (interrupted, or a background task's command outlived it): the command has no
  // scope left to run in, so its tree goes now rather than at its timeout.
  let cancelled = false;
  const cancel = () => {
    cancelled = true;
    kill();
  };
  const signal = ctx.signal;
  signal?.addEventListener("abort", cancel, { once: true });
  if (signal?.aborted) cancel();
  const result = await child;
  clearTimeout(timer);
  signal?.removeEventListener("abort", cancel);
  await treeKilled;
  // The command may have left background descendants in its group: they go with it.
  killGroup(child.pid);
  if (cancelled && !timedOut) {
    throw new ReplyError("scope_expired", `execution ${ctx.live.id} ended while ${JSON.stringify(file)} ran; its process tree was killed`);
  }
  if (result.failed && result.exitCode === undefined && !result.signal && !timedOut) {
    throw new ReplyError("not_found", `cannot run ${JSON.stringify(file)}: ${result.shortMessage ?? result.message}`);
  }
  return fitReply({
    exit_code: result.exitCode ?? null,
    signal: result.signal ?? null,
    timed_out: timedOut,
    stdout: stdout.text(),
    stderr: stderr.text(),
    truncated_bytes: stdout.dropped + stderr.dropped,
    duration_ms: Date.now() - started,
  });
}

/** Room left in one frame for the reply value once the envelope around it is counted. */
export const RUN_REPLY_BUDGET_BYTES = 1_000_000;

interface RunReply {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  stdout: string;
  stderr: string;
  truncated_bytes: number;
  duration_ms: number;
}

/**
 * Escaping can grow text (a NUL byte becomes six), so the byte budget alone does not make the
 * reply fit one frame: cut the longer stream until the encoded reply fits, counting what is cut.
 */
export function fitReply(reply: RunReply): RunReply {
  let size = Buffer.byteLength(JSON.stringify(reply));
  while (size > RUN_REPLY_BUDGET_BYTES) {
    const key = reply.stdout.length >= reply.stderr.length ? "stdout" : "stderr";
    const text = reply[key];
    const keepChars = Math.max(0, Math.floor(text.length / 2));
    let kept = text.slice(0, keepChars);
    // Never split a surrogate pair: the encoder refuses lone surrogates.
    if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
    reply = { ...reply, [key]: kept, truncated_bytes: reply.truncated_bytes + Buffer.byteLength(text) - Buffer.byteLength(kept) };
    size = Buffer.byteLength(JSON.stringify(reply));
  }
  return reply;
}
