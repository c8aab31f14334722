import { readdirSync, readFileSync } from "node:fs";

/** One process as read from /proc/<pid>/stat. */
export interface ProcEntry {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
}

/** Parse a /proc/<pid>/stat line; the command name may itself hold spaces and parentheses. */
export function parseProcStat(line: string): ProcEntry | undefined {
  const open = line.indexOf("(");
  const close = line.lastIndexOf(")");
  if (open < 0 || close < open) return undefined;
  const pid = Number(line.slice(0, open).trim());
  const rest = line.slice(close + 2).split(" ");
  const state = rest[0];
  const ppid = Number(rest[1]);
  const pgid = Number(rest[2]);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgid) || state === undefined) return undefined;
  return { pid, ppid, pgid, state };
}

/** Read one process's stat, or undefined when it is gone. */
export function readProc(pid: number): ProcEntry | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/** Snapshot every process visible in /proc. */
export function listProcs(): ProcEntry[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const out: ProcEntry[] = [];
  for (const name of names) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    const entry = readProc(Number(name));
    if (entry) out.push(entry);
  }
  return out;
}

/** Every descendant of `root` (not `root` itself), found by following ppid links in one snapshot. */
export function descendants(root: number, procs: ProcEntry[] = listProcs()): ProcEntry[] {
  const children = new Map<number, ProcEntry[]>();
  for (const p of procs) {
    const list = children.get(p.ppid);
    if (list) list.push(p);
    else children.set(p.ppid, [p]);
  }
  const out: ProcEntry[] = [];
  const queue = [root];
  const seen = new Set<number>([root]);
  while (queue.length > 0) {
    const next = queue.shift() as number;
    for (const child of children.get(next) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      out.push(child);
      queue.push(child.pid);
    }
  }
  return out;
}

/** True while `pid` exists and is not a zombie. */
export function isAlive(pid: number): boolean {
  const entry = readProc(pid);
  return entry !== undefined && entry.state !== "Z" && entry.state !== "X";
}

function kill(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // ESRCH (gone) or EPERM (pid reused by someone else's process): nothing more to do here.
  }
}

/**
 * One synchronous kill pass: SIGKILL the group led by `root`, `root`, every pid in `known`, and
 * every descendant found now, plus the groups those lead (a setsid grandchild leads its own).
 * Returns the union of pids it aimed at.
 */
export function killTreeOnce(root: number, known: Iterable<number> = []): Set<number> {
  const targets = new Map<number, ProcEntry | undefined>();
  for (const p of descendants(root)) targets.set(p.pid, p);
  for (const pid of known) if (!targets.has(pid)) targets.set(pid, readProc(pid));
  kill(-root, "SIGKILL");
  kill(root, "SIGKILL");
  for (const [pid, entry] of targets) {
    if (entry && entry.pgid === pid) kill(-pid, "SIGKILL");
    kill(pid, "SIGKILL");
  }
  return new Set(targets.keys());
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Kill the whole tree under `root`: collect before killing, kill, then re-walk until no process
 * of the tree is alive (or `timeoutMs` passes). Resolves with the pids still alive (normally none).
 */
export async function killTree(root: number, known: Iterable<number> = [], timeoutMs = 5000): Promise<number[]> {
  const all = new Set<number>(known);
  const deadline = Date.now() + timeoutMs;
  let delay = 1;
  for (;;) {
    for (const pid of killTreeOnce(root, all)) all.add(pid);
    const alive = [...all, root].filter(isAlive);
    const stragglers = descendants(root);
    if (alive.length === 0 && stragglers.length === 0) return [];
    if (Date.now() >= deadline) return alive;
    await sleep(delay);
    delay = Math.min(delay * 2, 50);
  }
}
