import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isAlive, killTree, killTreeOnce, listProcs, machineScans, procFs, recordRoot, rememberBelow } from "./tree.js";

// The tree walks and kill passes over a made-up /proc and a recording process.kill (issue 38):
// a child that appears during a scan or a kernel without children files is a change to the model,
// not a real race, and no signal reaches a real process.

interface FakeProc {
  ppid: number;
  pgid: number;
  state: string;
  start: number;
  /**
   * Each thread's `children` text, or the error code reading it fails with (`gone`: the thread's
   * directory is gone too); undefined: the task directory cannot be listed (the process went).
   */
  tasks: Map<number, string | { code: string; gone?: boolean }> | undefined;
  /** Stays alive through SIGKILL (as a process in uninterruptible sleep would, for a while). */
  immortal?: boolean;
}

const procs = new Map<number, FakeProc>();
let reads: string[] = [];
let signals: Array<[number, string]> = [];
let scans = 0;
/** Called on every read of /proc itself (a scan): where a test forks a process mid-kill. */
let onScan: (scan: number) => void = () => {};
let procUnreadable = false;
/** Numeric entries of /proc whose process is gone before its stat is read. */
let ghosts: string[] = [];
let setTimeoutHook: () => void = () => {};
const real = { ...procFs };

const add = (pid: number, ppid: number, over: Partial<FakeProc> = {}): FakeProc => {
  const p: FakeProc = { ppid, pgid: pid, state: "S", start: pid * 10, tasks: new Map([[pid, ""]]), ...over };
  procs.set(pid, p);
  return p;
};
/** Each main thread's children file as the kernel keeps it: the pids whose ppid it is. */
const linkChildren = () => {
  for (const [pid, p] of procs) p.tasks?.set(pid, [...procs].filter(([, c]) => c.ppid === pid).map(([c]) => c).join(" "));
};
const enoent = (path: string) => Object.assign(new Error(`ENOENT ${path}`), { code: "ENOENT" });

beforeEach(() => {
  procs.clear();
  reads = [];
  signals = [];
  scans = 0;
  onScan = () => {};
  procUnreadable = false;
  ghosts = [];
  setTimeoutHook = () => {};
  procFs.readdir = (path) => {
    if (path === "/proc") {
      if (procUnreadable) throw enoent(path);
      onScan(++scans);
      return ["acpi", "self", ...[...procs.keys()].map(String), ...ghosts, "thread-self"];
    }
    const p = procs.get(Number(/^\/proc\/(\d+)\/task$/.exec(path)?.[1]));
    if (!p?.tasks) throw enoent(path);
    return [...p.tasks.keys()].map(String);
  };
  procFs.read = (path) => {
    reads.push(path);
    const m = /^\/proc\/(\d+)\/(stat|task\/(\d+)\/children)$/.exec(path);
    const p = m ? procs.get(Number(m[1])) : undefined;
    if (!m || !p) throw enoent(path);
    if (m[3] === undefined) return `${m[1]} (a b) ${p.state} ${p.ppid} ${p.pgid} ${Array.from({ length: 16 }, () => "0").join(" ")} ${p.start} 0 0\n`;
    const text = p.tasks?.get(Number(m[3]));
    if (text === undefined) throw enoent(path);
    if (typeof text !== "string") throw Object.assign(new Error(text.code), text);
    return text;
  };
  procFs.exists = (path) => {
    const m = /^\/proc\/(\d+)\/task\/(\d+)$/.exec(path);
    const task = m ? procs.get(Number(m[1]))?.tasks?.get(Number(m[2])) : undefined;
    return task !== undefined && (typeof task === "string" || task.gone !== true);
  };
  vi.spyOn(process, "kill").mockImplementation((target: number, signal?: string | number) => {
    signals.push([target, String(signal)]);
    const victims = target < 0 ? [...procs.values()].filter((p) => p.pgid === -target) : [procs.get(target)].filter((p) => p !== undefined);
    if (victims.length === 0) throw Object.assign(new Error("ESRCH"), { code: "ESRCH" });
    for (const v of victims) {
      if (signal === "SIGKILL" && !v.immortal) v.state = "Z";
      else if (signal === "SIGSTOP" && v.state === "S") v.state = "T";
    }
    return true;
  });
});

afterEach(() => {
  Object.assign(procFs, real);
  vi.restoreAllMocks();
});

const sorted = (known: Map<number, number>) => [...known.keys()].sort((a, b) => a - b);
const times = (target: number, signal: string) => signals.filter(([t, s]) => t === target && s === signal).length;

describe("listProcs on a made-up /proc", () => {
  it("reads the numeric entries only (pids starting with 9 too), and counts each scan", () => {
    add(9, 1);
    add(95, 9);
    add(10, 1);
    ghosts = ["77"];
    const before = machineScans.count;
    expect(listProcs().map((p) => p.pid).sort((a, b) => a - b)).toEqual([9, 10, 95]);
    expect(Number.isInteger(before)).toBe(true);
    expect(machineScans.count).toBe(before + 1);
    expect([...reads].sort()).toEqual(["/proc/10/stat", "/proc/77/stat", "/proc/9/stat", "/proc/95/stat"]);
  });

  it("a /proc it cannot read is no process at all, and still a scan", () => {
    add(10, 1);
    procUnreadable = true;
    const before = machineScans.count;
    expect(listProcs()).toEqual([]);
    expect(machineScans.count).toBe(before + 1);
  });
});

describe("rememberBelow on a made-up /proc", () => {
  it("walks the children files without a scan; a child listed twice is read once, a gone one skipped", () => {
    add(10, 1);
    add(11, 10);
    add(12, 11);
    add(13, 10);
    linkChildren();
    procs.get(10)!.tasks!.set(1010, "11 14 "); // a second thread: 11 again, and 14 that is gone
    const before = machineScans.count;
    expect([...rememberBelow(10)].sort((a, b) => a[0] - b[0])).toEqual([[11, 110], [12, 120], [13, 130]]);
    expect(machineScans.count).toBe(before);
    expect(reads.filter((r) => r === "/proc/11/stat")).toHaveLength(1);
    // Only pids were read: no empty field read as pid 0.
    expect(reads.every((r) => /^\/proc\/[1-9]\d*\//.test(r))).toBe(true);
  });

  it("a child whose task list is gone meanwhile has no children; a thread gone meanwhile or unreadable is skipped", () => {
    add(10, 1);
    add(11, 10);
    add(12, 10);
    add(13, 12);
    add(14, 12);
    linkChildren();
    procs.get(11)!.tasks = undefined; // exited after its parent listed it
    procs.get(12)!.tasks!.set(1012, { code: "EACCES" });
    procs.get(12)!.tasks!.set(2012, { code: "ENOENT", gone: true });
    const before = machineScans.count;
    expect(sorted(rememberBelow(10))).toEqual([11, 12, 13, 14]);
    expect(machineScans.count).toBe(before);
    expect(reads.every((r) => /^\/proc\/[1-9]\d*\//.test(r))).toBe(true);
  });

  it("a kernel without children files (ENOENT while the thread is there): the scan instead, group members too", () => {
    add(10, 1);
    add(11, 10);
    add(12, 1, { pgid: 10 }); // its parent exited: out of the ppid tree, still in root's group
    linkChildren();
    procs.get(11)!.tasks!.set(11, { code: "ENOENT" });
    const before = machineScans.count;
    expect(sorted(rememberBelow(10))).toEqual([11, 12]);
    expect(machineScans.count).toBe(before + 1);
  });

  it.each(["Z", "X"])("a root in state %s (dead: no subreaper any more) is scanned for, not walked", (state) => {
    add(10, 1, { state });
    add(12, 1, { pgid: 10 });
    const before = machineScans.count;
    expect(sorted(rememberBelow(10))).toEqual([12]);
    expect(machineScans.count).toBe(before + 1);
  });

  it("a root whose pid now names another process: the scan, which leaves known as it was", () => {
    add(10, 1, { start: 999 });
    add(11, 10);
    linkChildren();
    const known = new Map([[10, 100]]);
    expect(rememberBelow(10, known)).toBe(known);
    expect(sorted(known)).toEqual([10]);
  });
});

describe("isAlive on a made-up /proc", () => {
  it("a running or stopped process is alive; a zombie, a dead one or none is not", () => {
    add(10, 1);
    add(11, 1, { state: "T" });
    add(12, 1, { state: "Z" });
    add(13, 1, { state: "X" });
    expect([10, 11, 12, 13, 14].map(isAlive)).toEqual([true, true, false, false, false]);
  });
});

describe("killTreeOnce with a recording kill", () => {
  it("stops then kills the root's group, the root, and each known process (its group too when it leads one)", () => {
    add(10, 1);
    add(11, 10); // leads its own group
    add(12, 10, { pgid: 10 });
    linkChildren();
    killTreeOnce(10, recordRoot(10));
    const pass = (signal: string) => [[-10, signal], [10, signal], [-10, signal], [10, signal], [-11, signal], [11, signal], [12, signal]];
    // Two stop passes (the second finds nothing new), then one kill pass.
    expect(signals).toEqual([...pass("SIGSTOP"), ...pass("SIGSTOP"), ...pass("SIGKILL")]);
  });

  it("a known pid that now names another process, or none, is not signalled; a reaped root's group still is", () => {
    add(12, 1, { pgid: 10 }); // root 10 reaped, its group lives on in 12
    add(13, 1, { start: 999 });
    const known = new Map([[10, 100], [12, 120], [13, 130], [14, 140]]);
    killTreeOnce(10, known);
    expect(times(-10, "SIGKILL")).toBe(1);
    expect(times(12, "SIGKILL")).toBe(1);
    expect(signals.some(([t]) => t === 13 || t === -13 || t === 14)).toBe(false);
  });

  it("a root whose pid now names another process: neither it nor its group is signalled", () => {
    add(10, 1, { start: 999 });
    killTreeOnce(10, new Map([[10, 100]]));
    expect(signals).toEqual([]);
  });

  it("rescans while a scan finds someone new (a fork before its parent stopped), then once more", () => {
    add(10, 1);
    onScan = (scan) => {
      if (scan <= 3) add(20 + scan, 10);
    };
    expect(sorted(killTreeOnce(10))).toEqual([21, 22, 23]);
    expect(times(10, "SIGSTOP")).toBe(4);
    expect(times(23, "SIGKILL")).toBe(1);
  });

  it("a root alone: a second scan to be sure, then the kill", () => {
    add(10, 1);
    killTreeOnce(10);
    expect(scans).toBe(2);
    expect(times(10, "SIGSTOP")).toBe(2);
  });

  it("a tree that never stops growing: 16 scans, then the kill", () => {
    add(10, 1);
    onScan = (scan) => void add(100 + scan, 10);
    const known = killTreeOnce(10);
    expect(scans).toBe(16);
    expect(known.size).toBe(16);
  });

  it("a subreaper root is walked down its children files, no scan", () => {
    add(10, 1);
    add(11, 10);
    linkChildren();
    expect(sorted(killTreeOnce(10, recordRoot(10), true))).toEqual([10, 11]);
    expect(scans).toBe(0);
    expect(times(11, "SIGKILL")).toBe(1);
  });
});

describe("killTree with a recording kill and a made-up clock", () => {
  let now = 0;
  let delays: number[] = [];
  beforeEach(() => {
    now = 1_000_000;
    delays = [];
    vi.spyOn(Date, "now").mockImplementation(() => now);
    vi.spyOn(globalThis, "setTimeout").mockImplementation(((fn: () => void, ms: number) => {
      delays.push(ms);
      setTimeoutHook();
      fn();
      return 0;
    }) as unknown as typeof setTimeout);
  });

  it("a tree that dies: [] after one pass, zombies and dead ones counted as gone, with a scan by default", async () => {
    add(10, 1);
    add(11, 10);
    add(12, 10);
    procs.get(12)!.immortal = true;
    procs.get(12)!.state = "X";
    expect(await killTree(10)).toEqual([]);
    expect(delays).toEqual([]);
    expect(scans).toBeGreaterThan(0);
  });

  it("a process that does not die: passes with a doubling wait up to 50 ms, until the deadline, then its pid", async () => {
    add(10, 1);
    add(11, 10, { immortal: true });
    setTimeoutHook = () => {
      if (delays.length === 8) now += 1000;
    };
    expect(await killTree(10, new Map(), 1000)).toEqual([11]);
    expect(delays).toEqual([1, 2, 4, 8, 16, 32, 50, 50]);
  });

  it("a live root not recorded is waited for as well; a pid reused meanwhile is not", async () => {
    add(10, 1, { immortal: true });
    add(11, 10);
    add(13, 1, { immortal: true, start: 130 });
    const known = new Map([[13, 1]]); // an earlier process under pid 13, long gone
    setTimeoutHook = () => {
      now += 1000;
    };
    expect(await killTree(10, known, 1000)).toEqual([10]);
    expect(delays).toEqual([1]);
  });
});
