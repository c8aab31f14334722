import { readFileSync } from "node:fs";
import type { WorkerCommand } from "./command.js";
import { listProcs, readProc, type ProcEntry } from "./tree.js";

/** One process recorded with its start time, so a reused pid is never signalled. */
export interface PinnedProc {
  pid: number;
  start: number;
}

/** Where a pid-namespaced worker lives, as the host sees it. */
export interface NamespaceProcs {
  /** The namespace's init (pid 1 inside): killing it ends the namespace. */
  init: PinnedProc;
  /** The worker process (pid 2 inside): the target of the SIGINT rung. */
  worker: PinnedProc;
}

/** Put the sandbox prefix before a worker command (its environment is unchanged). */
export function wrapCommand(cmd: WorkerCommand, prefix: string[]): WorkerCommand {
  if (prefix.length === 0) return cmd;
  const [file, ...rest] = prefix;
  if (!file) throw new RangeError(`a sandbox prefix must name a program, got ${JSON.stringify(prefix)}`);
  return { file, args: [...rest, cmd.file, ...cmd.args], env: cmd.env };
}

/**
 * Find the namespace init (the one child of `root`) and the worker (the one child of the init).
 * Called once the worker said hello, before any cell ran, so each has exactly one child; anything
 * else means the prefix is not what `WorkerSandbox.pidNamespace` promised: undefined.
 */
export function namespaceProcs(root: number, procs: ProcEntry[] = listProcs()): NamespaceProcs | undefined {
  const childrenOf = (pid: number) => procs.filter((p) => p.ppid === pid);
  const inits = childrenOf(root);
  if (inits.length !== 1) return undefined;
  const init = inits[0]!;
  const workers = childrenOf(init.pid);
  if (workers.length !== 1) return undefined;
  const worker = workers[0]!;
  return { init: { pid: init.pid, start: init.start }, worker: { pid: worker.pid, start: worker.start } };
}

/** Send `signal` to a pinned process unless it is gone or its pid now names another process. */
export function signalPinned(proc: PinnedProc, signal: NodeJS.Signals): boolean {
  const entry = readProc(proc.pid);
  if (!entry || entry.start !== proc.start || entry.state === "Z" || entry.state === "X") return false;
  try {
    process.kill(proc.pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Pin `pid` with its start time (undefined when it is already gone). */
export function pin(pid: number): PinnedProc | undefined {
  const entry = readProc(pid);
  return entry ? { pid, start: entry.start } : undefined;
}

/** The one child of `root`, pinned; undefined unless there is exactly one. */
export function onlyChild(root: number): PinnedProc | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${root}/task/${root}/children`, "utf8").trim();
  } catch {
    return undefined;
  }
  const pids = text.split(/\s+/).filter(Boolean);
  return pids.length === 1 ? pin(Number(pids[0])) : undefined;
}
