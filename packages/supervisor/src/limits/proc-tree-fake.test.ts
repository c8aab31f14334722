import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseChildren, parseCounters, procTreeFs, TreeReader } from "./proc-tree.js";

// TreeReader over a made-up /proc (issue 38): a thread or child that comes or goes between two
// readings is a change to the model made when the walk reads a given file, not a real race.

interface FakeProc {
  ppid: number;
  start: number;
  /** The stat's num_threads; by default the number of tasks. */
  threads?: number;
  /** undefined: the stat cannot be read (the process is going). */
  statReadable?: boolean;
  /** Each thread's `children` text; undefined: that file cannot be read (the thread is gone). */
  tasks: Map<number, string | undefined>;
}

const procs = new Map<number, FakeProc>();
let opened: string[] = [];
let closed: string[] = [];
let reads: string[] = [];
let listings: string[] = [];
/** Called after each file read: where a test changes the model mid-walk. */
let afterRead: (path: string) => void = () => {};
const real = { ...procTreeFs };

const statText = (pid: number, p: FakeProc): string => {
  const f: string[] = Array.from({ length: 50 }, () => "0");
  f[0] = "S";
  f[1] = String(p.ppid);
  f[11] = String(pid); // utime: tells the processes apart in a reading
  f[17] = String(p.threads ?? p.tasks.size);
  f[19] = String(p.start);
  return `${pid} (fake) ${f.join(" ")}\n`;
};

const content = (path: string): string | undefined => {
  const m = /^\/proc\/(\d+)\/(?:stat|task\/(\d+)\/children)$/.exec(path)!;
  const p = procs.get(Number(m[1]));
  if (!p) return undefined;
  if (m[2] === undefined) return p.statReadable === false ? undefined : statText(Number(m[1]), p);
  return p.tasks.get(Number(m[2]));
};

const add = (pid: number, ppid: number, children: string | Array<string | undefined> = "", start = pid * 10): FakeProc => {
  const list = Array.isArray(children) ? children : [children];
  const p: FakeProc = { ppid, start, tasks: new Map(list.map((c, i) => [pid + i * 1000, c])) };
  procs.set(pid, p);
  return p;
};

beforeEach(() => {
  procs.clear();
  opened = [];
  closed = [];
  reads = [];
  listings = [];
  afterRead = () => {};
  procTreeFs.readdir = (path) => {
    listings.push(path);
    const p = procs.get(Number(/^\/proc\/(\d+)\/task$/.exec(path)![1]));
    if (!p) throw Object.assign(new Error(`ENOENT ${path}`), { code: "ENOENT" });
    return [...p.tasks.keys()].map(String);
  };
  procTreeFs.open = (path) => {
    opened.push(path);
    return {
      readBytes: () => {
        reads.push(path);
        const text = content(path);
        afterRead(path);
        return text === undefined ? undefined : Buffer.from(text, "latin1");
      },
      close: () => void closed.push(path),
    };
  };
});

afterEach(() => {
  Object.assign(procTreeFs, real);
});

const pids = (reader: TreeReader, root = 1) => {
  const r = reader.read(root);
  return r === undefined ? undefined : [...r.procs.keys()].sort((a, b) => a - b);
};
const count = (list: string[], path: string) => list.filter((p) => p === path).length;

describe("TreeReader on a still tree", () => {
  it("reads every process below the root with its counters, and keeps their files open between readings", () => {
    add(1, 0, "2 3");
    add(2, 1, "4");
    add(3, 1);
    add(4, 2);
    const reader = new TreeReader();
    const r = reader.read(1)!;
    expect([...r.procs.keys()].sort()).toEqual([2, 3, 4]);
    expect(r.procs.get(4)).toMatchObject({ ppid: 2, start: 40, ownTicks: 4, threads: 1 });
    expect(r.root).toMatchObject({ ppid: 0, start: 10, ownTicks: 1 });
    const openedOnce = opened.length;
    const listedOnce = listings.length;
    expect(pids(reader)).toEqual([2, 3, 4]);
    // The same files read again: nothing opened, no thread listed again.
    expect(opened.length).toBe(openedOnce);
    expect(listings.length).toBe(listedOnce);
    expect(closed).toEqual([]);
    reader.close();
    expect([...closed].sort()).toEqual([...opened].sort());
  });

  it("a pid listed twice in one walk (by two threads) is read once", () => {
    add(1, 0, ["2", "2"]);
    add(2, 1);
    const reader = new TreeReader();
    expect(pids(reader)).toEqual([2]);
    expect(count(reads, "/proc/2/stat")).toBe(1);
  });

  it("a children file that is not plain decimals is read field by field as Number reads it", () => {
    add(1, 0, "+2 3 ");
    add(2, 1);
    add(3, 1);
    expect(pids(new TreeReader())).toEqual([2, 3]);
  });
});

describe("TreeReader when the tree changes between two readings", () => {
  it("a thread gone since its listing: the threads are listed again, the gone one's file closed", () => {
    const root = add(1, 0, ["2", "3"]);
    add(2, 1);
    add(3, 1);
    const reader = new TreeReader();
    expect(pids(reader)).toEqual([2, 3]);
    // The second thread exits with its child 3, which is reparented to the first thread.
    root.tasks.delete(1001);
    root.tasks.set(1, "2 3");
    const listed = count(listings, "/proc/1/task");
    expect(pids(reader)).toEqual([2, 3]);
    expect(count(listings, "/proc/1/task")).toBe(listed + 1);
    expect(closed).toEqual(["/proc/1/task/1001/children"]);
  });

  it("a thread that came since the listing: listed again, and the new thread's child is found", () => {
    const root = add(1, 0, "2");
    add(2, 1);
    add(5, 1);
    // After the root's children were read, before its stat: a second thread, with a child.
    afterRead = (path) => {
      if (path === "/proc/1/task/1/children" && !root.tasks.has(1001)) root.tasks.set(1001, "5");
    };
    expect(pids(new TreeReader())).toEqual([2, 5]);
  });

  it("a stat whose thread count never matches the listing: undefined after three walks", () => {
    add(1, 0, "2").threads = 2;
    add(2, 1);
    const reader = new TreeReader();
    expect(reader.read(1)).toBeUndefined();
    // Each walk lists the root's threads again (the count changed) and reads its stat once.
    expect(count(listings, "/proc/1/task")).toBe(3);
    expect(count(reads, "/proc/1/stat")).toBe(3);
  });

  it("a thread whose children file can never be read: two listings per walk, three walks, then undefined", () => {
    add(1, 0, ["2", undefined]);
    add(2, 1);
    const reader = new TreeReader();
    expect(reader.read(1)).toBeUndefined();
    expect(count(listings, "/proc/1/task")).toBe(6);
  });

  it("a child gone between its listing and its stat: walked again without it, its files closed", () => {
    const root = add(1, 0, "2 3");
    add(2, 1);
    const three = add(3, 1);
    three.statReadable = false;
    afterRead = (path) => {
      if (path === "/proc/3/stat") {
        procs.delete(3);
        root.tasks.set(1, "2");
      }
    };
    const reader = new TreeReader();
    expect(pids(reader)).toEqual([2]);
    expect(closed.sort()).toEqual(["/proc/3/stat", "/proc/3/task/3/children"]);
  });

  it("a child whose task list is gone (listed, then exited): walked again without it", () => {
    const root = add(1, 0, "2 3");
    add(2, 1);
    add(3, 1);
    afterRead = (path) => {
      if (path === "/proc/2/stat" && procs.has(3)) {
        procs.delete(3);
        root.tasks.set(1, "2");
      }
    };
    expect(pids(new TreeReader())).toEqual([2]);
  });

  it("an orphan reparented to the root during the walk: walked again with it", () => {
    const root = add(1, 0, "2");
    add(2, 1, "5");
    add(5, 2);
    afterRead = (path) => {
      if (path === "/proc/5/stat" && procs.get(5)!.ppid === 2) {
        procs.get(2)!.tasks.set(2, "");
        procs.get(5)!.ppid = 1;
        root.tasks.set(1, "2 5");
      }
    };
    const r = new TreeReader().read(1)!;
    expect([...r.procs.keys()].sort()).toEqual([2, 5]);
    expect(r.procs.get(5)!.ppid).toBe(1);
  });

  it("a root's child reaped during the walk (the root's list shorter): walked again without it", () => {
    const root = add(1, 0, "2 5");
    add(2, 1);
    add(5, 1);
    afterRead = (path) => {
      if (path === "/proc/5/stat" && procs.has(5)) {
        procs.delete(5);
        root.tasks.set(1, "2");
      }
    };
    expect(pids(new TreeReader())).toEqual([2]);
  });

  it("a root's child replaced by another during the walk (the same length): walked again", () => {
    const root = add(1, 0, "2 3");
    add(2, 1);
    add(3, 1);
    add(4, 1);
    afterRead = (path) => {
      if (path === "/proc/3/stat" && procs.has(3)) {
        procs.delete(3);
        root.tasks.set(1, "2 4");
      }
    };
    expect(pids(new TreeReader())).toEqual([2, 4]);
  });

  it("a root gone during the walk: undefined", () => {
    add(1, 0, "2");
    add(2, 1);
    afterRead = (path) => {
      if (path === "/proc/2/stat") procs.delete(1);
    };
    expect(new TreeReader().read(1)).toBeUndefined();
  });

  it("a pid reused by another process: its files are opened afresh and the new process read", () => {
    const root = add(1, 0, "2 3");
    add(2, 1);
    add(3, 1);
    const reader = new TreeReader();
    expect(pids(reader)).toEqual([2, 3]);
    add(2, 1, "", 99);
    expect(reader.read(1)!.procs.get(2)!.start).toBe(99);
    expect(count(opened, "/proc/2/stat")).toBe(2);
    expect(closed.sort()).toEqual(["/proc/2/stat", "/proc/2/task/2/children"]);
    // A process that left the tree: its files are closed, the root's and the others' kept.
    closed = [];
    root.tasks.set(1, "2");
    procs.delete(3);
    expect(pids(reader)).toEqual([2]);
    expect(closed.sort()).toEqual(["/proc/3/stat", "/proc/3/task/3/children"]);
  });
});

describe("the parsers at the end of the text", () => {
  it("parseCounters: a close paren first is a command name; without one, digits alone are no stat", () => {
    const fields = statText(1, { ppid: 7, start: 5, tasks: new Map([[1, ""]]) }).slice("1 (fake)".length);
    expect(parseCounters(`)${fields}`)).toMatchObject({ ppid: 7, start: 5 });
    expect(parseCounters(`x${fields.replace("S", "0")}`)).toBeUndefined();
  });

  it("parseChildren: 0 is a pid like any other; past 1e15 a field is refused, nothing pushed", () => {
    const out: number[] = [];
    expect(parseChildren(Buffer.from("0 7 0"), out)).toBe(true);
    expect(out).toEqual([0, 7, 0]);
    expect(parseChildren(Buffer.from(`5 ${"1".padEnd(17, "0")}`), out)).toBe(false);
    expect(parseChildren(Buffer.from("999999999999999"), out)).toBe(true);
    expect(out).toEqual([0, 7, 0, 999999999999999]);
  });
});
