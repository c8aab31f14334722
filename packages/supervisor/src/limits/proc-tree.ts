import { readdirSync } from "node:fs";
import { ControlFile } from "./cgroup-files.js";

/** A /proc file kept open between readings (what {@link ControlFile} gives). */
export interface ProcFile {
  readBytes(): Uint8Array | undefined;
  close(): void;
}

/**
 * The /proc calls of this module, through one object so a test can stand a made-up /proc in
 * (a thread or child that comes or goes between two readings) instead of racing real processes.
 */
export const procTreeFs = {
  readdir: (path: string): string[] => readdirSync(path),
  open: (path: string): ProcFile => new ControlFile(path),
};

/** The counters of one process that tree accounting needs, from `/proc/<pid>/stat` (proc(5)). */
export interface ProcCounters {
  ppid: number;
  /** Start time in clock ticks since boot: with the pid, it names one process. */
  start: number;
  /** utime + stime: the process's own CPU time, in ticks. */
  ownTicks: number;
  /** cutime + cstime: the CPU time of the children it waited for (and theirs), in ticks. */
  reapedTicks: number;
  /** cminflt + cmajflt: page faults of the children it waited for; a reaped child always leaves some. */
  reapedFaults: number;
  /** SIGCHLD ignored: its children are reaped by the kernel and leave no counter behind. */
  ignoresChld: boolean;
  threads: number;
}

/** The tree below a subreaper root (the guard), read at one instant. */
export interface TreeReading {
  root: ProcCounters;
  /** Every process below the root, by pid. */
  procs: Map<number, ProcCounters>;
}

// After the command name: 1 ppid, 8 cminflt, 10 cmajflt, 11 utime, 12 stime, 13 cutime, 14 cstime,
// 17 num_threads, 19 starttime, 30 sigignore (a decimal bitmap).
const F = { ppid: 1, cminflt: 8, cmajflt: 10, utime: 11, stime: 12, cutime: 13, cstime: 14, threads: 17, start: 19, sigignore: 30 } as const;
const LAST = F.sigignore;
/** sigignore modulo 2^17 keeps bit 16 (SIGCHLD, signal 17) exact however long the decimal is. */
const SIGCHLD_MOD = 1 << 17;
const SIGCHLD_BIT = 1 << 16;

const SPACE = 0x20;
const NEWLINE = 0x0a;
const CLOSE_PAREN = 0x29;
const DIGIT_0 = 0x30;
/** The fields parseCounters keeps, by index after the command name (bit i: field i). */
const WANTED = [F.ppid, F.cminflt, F.cminflt + 1, F.cmajflt, F.utime, F.stime, F.cutime, F.cstime, F.threads, F.start, F.sigignore].reduce((m, i) => m | (1 << i), 0);
// Reused by every call (synchronous, no reentry): an array per reading was most of its garbage.
const VALUES = new Float64Array(LAST + 1);

/**
 * Parse the counters of a stat (its bytes as read, or its text), reading the fields in place:
 * the bytes are walked once, no string is made (a split of all 52 fields and a Number for each
 * cost most of a reading, which happens twice per cell); undefined when a field it needs is not
 * a plain decimal. A text is read as its UTF-8 bytes: every character that matters is ASCII.
 */
export function parseCounters(stat: string | Uint8Array): ProcCounters | undefined {
  const bytes = typeof stat === "string" ? Buffer.from(stat, "utf8") : stat;
  const n = bytes.length;
  let close = n - 1;
  while (close >= 0 && bytes[close] !== CLOSE_PAREN) close--;
  if (close < 0) return undefined;
  let at = close + 2;
  for (let field = 0; field <= LAST; field++) {
    let end = at;
    if ((WANTED >>> field) & 1) {
      // One pass: the digits are summed as the field is found.
      let value = 0;
      for (let c = 0; end < n && (c = bytes[end]!) !== SPACE; end++) {
        const digit = c - DIGIT_0;
        if (digit < 0 || digit > 9) {
          // The last field may end the line.
          if (field === LAST && c === NEWLINE && (end + 1 === n || bytes[end + 1] === SPACE)) {
            end++;
            break;
          }
          return undefined;
        }
        value = field === LAST ? (value * 10 + digit) % SIGCHLD_MOD : value * 10 + digit;
      }
      if (end === at || end - at > 20) return undefined;
      VALUES[field] = value;
    } else {
      while (end < n && bytes[end] !== SPACE) end++;
    }
    if (end >= n && field < LAST) return undefined;
    at = end + 1;
  }
  const ignoresChld = VALUES[F.sigignore]! >= SIGCHLD_BIT;
  return {
    ppid: VALUES[F.ppid]!,
    start: VALUES[F.start]!,
    ownTicks: VALUES[F.utime]! + VALUES[F.stime]!,
    reapedTicks: VALUES[F.cutime]! + VALUES[F.cstime]!,
    reapedFaults: VALUES[F.cminflt]! + VALUES[F.cmajflt]!,
    threads: VALUES[F.threads]!,
    ignoresChld,
  };
}

/**
 * The pids of a `children` file (space-separated decimals), pushed onto `out`; false (and
 * nothing pushed) when a field is anything else. Read in place: most threads have no child.
 */
export function parseChildren(bytes: Uint8Array, out: number[]): boolean {
  const before = out.length;
  let value = -1;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (c === SPACE) {
      if (value >= 0) out.push(value);
      value = -1;
    } else if (c >= DIGIT_0 && c <= DIGIT_0 + 9 && value < 1e15) {
      value = (value < 0 ? 0 : value * 10) + (c - DIGIT_0);
    } else {
      out.length = before;
      return false;
    }
  }
  if (value >= 0) out.push(value);
  return true;
}

/**
 * One process's files, kept open between readings: each reading is a pread, not an open, a read
 * and a close (a /proc read through a fresh descriptor cost ten times as much). Its threads are
 * listed again only when their number changed or one of them is gone.
 */
class ProcHandle {
  readonly stat: ProcFile;
  #tids: number[] | undefined;
  readonly #children = new Map<number, ProcFile>();

  constructor(readonly pid: number) {
    this.stat = procTreeFs.open(`/proc/${pid}/stat`);
  }

  /** How many threads were listed last (undefined: not listed yet). */
  get listedThreads(): number | undefined {
    return this.#tids?.length;
  }

  /** List the threads again at the next reading (their number changed). */
  forgetThreads(): void {
    this.#tids = undefined;
  }

  /** The children of every thread; undefined when the process is gone or the kernel has no such files. */
  children(): number[] | undefined {
    for (let attempt = 0; attempt < 2; attempt++) {
      const tids = (this.#tids ??= this.#listThreads());
      if (!tids) return undefined;
      const out = this.#read(tids);
      if (out) return out;
      this.#tids = undefined; // a thread is gone: list them again
    }
    return undefined;
  }

  #listThreads(): number[] | undefined {
    try {
      const tids = procTreeFs.readdir(`/proc/${this.pid}/task`).map(Number);
      for (const [tid, file] of this.#children) {
        if (!tids.includes(tid)) {
          file.close();
          this.#children.delete(tid);
        }
      }
      return tids;
    } catch {
      return undefined;
    }
  }

  #read(tids: number[]): number[] | undefined {
    const out: number[] = [];
    for (const tid of tids) {
      let file = this.#children.get(tid);
      if (!file) this.#children.set(tid, (file = procTreeFs.open(`/proc/${this.pid}/task/${tid}/children`)));
      const bytes = file.readBytes();
      if (bytes === undefined) return undefined;
      if (!parseChildren(bytes, out)) {
        // Not plain decimals (never written by the kernel): each field as Number reads it.
        for (const field of Buffer.from(bytes).toString("utf8").split(" ")) if (field) out.push(Number(field));
      }
    }
    return out;
  }

  close(): void {
    this.stat.close();
    for (const file of this.#children.values()) file.close();
    this.#children.clear();
  }
}

/** Reads the tree below one root again and again, keeping the files of the processes it saw. */
export class TreeReader {
  readonly #handles = new Map<number, { handle: ProcHandle; start: number | undefined }>();

  /** The tree below `root` (a live child subreaper), or undefined when three walks in a row were disturbed. */
  read(root: number): TreeReading | undefined {
    for (let attempt = 0; attempt < 3; attempt++) {
      const reading = this.#walk(root);
      if (reading) {
        this.#forgetAllBut(root, reading.procs);
        return reading;
      }
    }
    return undefined;
  }

  /**
   * One walk down from `root`: each process's children are listed before its counters are read,
   * and its counters before its children's, so a child reaped during the walk is either counted in
   * its parent's counters or found missing. Missing (listed, then gone) or a root whose children
   * changed meanwhile: undefined, and the caller reads again.
   */
  #walk(root: number): TreeReading | undefined {
    const top = this.#node(root);
    if (!top) return undefined;
    const procs = new Map<number, ProcCounters>();
    const queue = [...top.children];
    while (queue.length > 0) {
      const pid = queue.shift()!;
      if (procs.has(pid)) continue;
      const node = this.#node(pid);
      if (!node) return undefined;
      procs.set(pid, node.counters);
      queue.push(...node.children);
    }
    // An orphan reparented to the root while the walk ran would be missed: the root's list again.
    const again = this.#handle(root).children();
    if (!again || again.length !== top.children.length || again.some((pid, i) => pid !== top.children[i])) return undefined;
    return { root: top.counters, procs };
  }

  #node(pid: number): { counters: ProcCounters; children: number[] } | undefined {
    const handle = this.#handle(pid);
    const children = handle.children();
    const bytes = handle.stat.readBytes();
    const counters = bytes === undefined ? undefined : parseCounters(bytes);
    const entry = this.#handles.get(pid)!;
    // Gone, unreadable, or another process under a reused pid: the walk starts over, with fresh files.
    if (!children || !counters || (entry.start !== undefined && entry.start !== counters.start)) {
      this.#drop(pid);
      return undefined;
    }
    entry.start = counters.start;
    // Threads came or went since they were listed: a new one's children were not read.
    if (handle.listedThreads !== counters.threads) {
      handle.forgetThreads();
      return undefined;
    }
    return { counters, children };
  }

  #handle(pid: number): ProcHandle {
    let entry = this.#handles.get(pid);
    if (!entry) this.#handles.set(pid, (entry = { handle: new ProcHandle(pid), start: undefined }));
    return entry.handle;
  }

  #drop(pid: number): void {
    this.#handles.get(pid)?.handle.close();
    this.#handles.delete(pid);
  }

  #forgetAllBut(root: number, procs: Map<number, ProcCounters>): void {
    for (const pid of this.#handles.keys()) if (pid !== root && !procs.has(pid)) this.#drop(pid);
  }

  close(): void {
    for (const pid of [...this.#handles.keys()]) this.#drop(pid);
  }
}

/**
 * The tree's CPU time in ticks: every process below the root (its own time and what it reaped)
 * and what the root reaped (orphans); the root's own time is not the tree's (it is the guard).
 */
export function treeTicks(reading: TreeReading): number {
  let ticks = reading.root.reapedTicks;
  for (const p of reading.procs.values()) ticks += p.ownTicks + p.reapedTicks;
  return ticks;
}

/** Whether a process of the reading (the root too) has SIGCHLD ignored: what it reaps leaves no counter. */
export function losesChildren(reading: TreeReading): boolean {
  if (reading.root.ignoresChld) return true;
  for (const p of reading.procs.values()) if (p.ignoresChld) return true;
  return false;
}

/**
 * The pids of `worker` and its ancestors below the root, when the reading holds nothing else
 * (the tree is the worker alone, behind its launchers); undefined otherwise.
 */
export function aloneChain(reading: TreeReading, worker: number): number[] | undefined {
  const chain: number[] = [];
  for (let pid: number | undefined = worker; pid !== undefined && reading.procs.has(pid); pid = reading.procs.get(pid)!.ppid) {
    chain.push(pid);
  }
  return chain.length > 0 && chain.length === reading.procs.size ? chain : undefined;
}
