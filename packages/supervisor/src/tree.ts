import { existsSync, readdirSync, readFileSync } from "node:fs";

/**
 * The /proc calls of this module, through one object so a test can stand a made-up /proc in
 * (a child that appears or goes mid-walk, a kernel without children files) instead of racing
 * real processes. Nothing else replaces them.
 */
export const procFs = {
  readdir: (path: string): string[] => readdirSync(path),
  read: (path: string, encoding: "utf8" | "latin1"): string => readFileSync(path, encoding),
  exists: (path: string): boolean => existsSync(path),
};

/** One process as read from /proc/<pid>/stat. */
export interface ProcEntry {
  pid: number;
  ppid: number;
  pgid: number;
  state: string;
  /** Start time in clock ticks since boot: with the pid, it names one process even after pid reuse. */
  start: number;
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
  const start = Number(rest[19]);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgid) || state === undefined) return undefined;
  return { pid, ppid, pgid, state, start: Number.isFinite(start) ? start : 0 };
}

/** Read one process's stat, or undefined when it is gone. */
export function readProc(pid: number): ProcEntry | undefined {
  try {
    return parseProcStat(procFs.read(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * How many times this process has read every entry of /proc (here and in tagged.ts): each costs as
 * much as the machine has processes, so a worker's ordinary exit must not need one (tests count).
 */
export const machineScans = { count: 0 };

/** Snapshot every process visible in /proc. */
export function listProcs(): ProcEntry[] {
  machineScans.count++;
  let names: string[];
  try {
    names = procFs.readdir("/proc");
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

/** The children of `pid` from its threads' `children` files; undefined where the kernel has none. */
function childrenOf(pid: number): number[] | undefined {
  let tasks: string[];
  try {
    tasks = procFs.readdir(`/proc/${pid}/task`);
  } catch {
    return []; // gone meanwhile
  }
  const out: number[] = [];
  for (const tid of tasks) {
    let text: string;
    try {
      text = procFs.read(`/proc/${pid}/task/${tid}/children`, "latin1");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT" && procFs.exists(`/proc/${pid}/task/${tid}`)) return undefined;
      continue; // the thread exited meanwhile
    }
    for (const field of text.split(" ")) if (field) out.push(Number(field));
  }
  return out;
}

/**
 * {@link rememberTree} for a live root that is a child subreaper (the guard): every process of its
 * tree is below it, so a walk down the children files finds them all, reading only the tree (a
 * scan of /proc reads every process on the machine). Falls back to that scan where the kernel has
 * no children files, and when the root is dead.
 */
export function rememberBelow(root: number, known: KnownProcs = new Map()): KnownProcs {
  const rootEntry = readProc(root);
  // A dead root (gone, or a zombie whose children went to init) is no subreaper any more: scan.
  if (!rootEntry || rootEntry.state === "Z" || rootEntry.state === "X" || rootReplaced(root, known, rootEntry)) return rememberTree(root, known);
  const queue = [root];
  const seen = new Set<number>(queue);
  while (queue.length > 0) {
    const children = childrenOf(queue.shift()!);
    if (children === undefined) return rememberTree(root, known);
    for (const pid of children) {
      if (seen.has(pid)) continue;
      seen.add(pid);
      const entry = readProc(pid);
      if (!entry) continue;
      known.set(pid, entry.start);
      queue.push(pid);
    }
  }
  return known;
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
 * Processes seen earlier in a tree, by pid, with their start time so a reused pid is never hit.
 * When it holds the root itself, a root pid that now names another process is left alone too.
 */
export type KnownProcs = Map<number, number>;

/** Record `root` with its start time in `known` (so a kill after its reap never hits a reused pid); returns `known`. */
export function recordRoot(root: number, known: KnownProcs = new Map()): KnownProcs {
  const entry = readProc(root);
  if (entry) known.set(root, entry.start);
  return known;
}

/** True when `known` recorded `root` and its pid now names another process (reaped and reused). */
function rootReplaced(root: number, known: KnownProcs, entry: ProcEntry | undefined = readProc(root)): boolean {
  const start = known.get(root);
  return start !== undefined && entry !== undefined && entry.start !== start;
}

/**
 * Add every current descendant of `root` to `known`, and every member of a group that `root` or a
 * known process leads (a member whose parent exited left the ppid tree but not the group: it is
 * signalled through the group, and a kill is only done once it is seen dead). Returns `known`
 * (unchanged when root's pid was reused).
 */
export function rememberTree(root: number, known: KnownProcs = new Map(), procs: ProcEntry[] = listProcs()): KnownProcs {
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  if (rootReplaced(root, known, byPid.get(root))) return known;
  for (const p of descendants(root, procs)) known.set(p.pid, p.start);
  for (const p of procs) {
    if (p.pgid !== p.pid && !known.has(p.pid) && leadsKnownGroup(p.pgid, root, known, byPid)) known.set(p.pid, p.start);
  }
  return known;
}

/**
 * True when group `pgid` is root's or a known process's. A group id is not reused while the group
 * has members, so a leader that is gone still names the same group; a live leader must be the
 * process recorded (not a reused pid).
 */
function leadsKnownGroup(pgid: number, root: number, known: KnownProcs, byPid: Map<number, ProcEntry>): boolean {
  if (pgid !== root && !known.has(pgid)) return false;
  const leader = byPid.get(pgid);
  const start = known.get(pgid);
  return leader === undefined || start === undefined || leader.start === start;
}

function signalTree(root: number, known: KnownProcs, signal: NodeJS.Signals): void {
  // A reaped root's group lives on while a member does (its pid cannot be reused meanwhile), so
  // the group is signalled unless the pid already names another process.
  if (!rootReplaced(root, known)) {
    kill(-root, signal);
    kill(root, signal);
  }
  for (const [pid, start] of known) {
    const entry = readProc(pid);
    if (!entry || entry.start !== start) continue;
    if (entry.pgid === pid) kill(-pid, signal);
    kill(pid, signal);
  }
}

/**
 * One synchronous kill pass over the tree under `root`. First freeze it: SIGSTOP the group led by
 * `root`, `root`, and every descendant (plus the groups those lead, as a setsid grandchild leads
 * its own), rescanning until a scan finds nothing new, because a stopped process can neither fork
 * nor leave the group. Then SIGKILL the same set. Adds what it found to `known`. With `subreaper`
 * (`root` is a guard: a child subreaper of the whole tree) a live root's tree is walked down the
 * children files ({@link rememberBelow}) instead of a scan of every process on the machine.
 */
export function killTreeOnce(root: number, known: KnownProcs = new Map(), subreaper = false): KnownProcs {
  for (let scan = 0; scan < 16; scan++) {
    const before = known.size;
    // A root that is a live child subreaper (a guard) has its whole tree below it: walk it.
    if (subreaper) rememberBelow(root, known);
    else rememberTree(root, known);
    signalTree(root, known, "SIGSTOP");
    if (scan > 0 && known.size === before) break;
  }
  signalTree(root, known, "SIGKILL");
  return known;
}

function knownAlive(known: KnownProcs): number[] {
  const out: number[] = [];
  for (const [pid, start] of known) {
    const entry = readProc(pid);
    if (entry && entry.start === start && entry.state !== "Z" && entry.state !== "X") out.push(pid);
  }
  return out;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Kill the whole tree under `root`: collect before killing, kill, then re-walk until no process
 * of the tree is alive (or `timeoutMs` passes). Resolves with the pids still alive (normally none).
 * `subreaper`: as for {@link killTreeOnce}.
 */
export async function killTree(root: number, known: KnownProcs = new Map(), timeoutMs = 5000, subreaper = false): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let delay = 1;
  for (;;) {
    killTreeOnce(root, known, subreaper);
    const alive = knownAlive(known);
    // A dead root's children were reparented when it exited, so once root and every process seen
    // in its tree are gone, nothing is left; while root lives, the next pass rescans.
    if (!known.has(root) && isAlive(root)) alive.push(root);
    if (alive.length === 0) return [];
    if (Date.now() >= deadline) return alive;
    await sleep(delay);
    delay = Math.min(delay * 2, 50);
  }
}
