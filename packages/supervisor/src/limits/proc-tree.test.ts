import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { aloneChain, losesChildren, parseChildren, parseCounters, treeTicks, TreeReader, type ProcCounters, type TreeReading } from "./proc-tree.js";

const stat = (sigignore: string, threads = 1) => `42 (a) b) S 7 42 42 0 -1 4194560 100 5 3 2 11 13 17 19 20 0 ${threads} 0 12345 1000 10 0 0 0 0 0 0 0 0 ${sigignore} 0 0 0 0 17 1`;

const proc = (over: Partial<ProcCounters> = {}): ProcCounters => ({ ppid: 1, start: 1, ownTicks: 0, reapedTicks: 0, reapedFaults: 0, ignoresChld: false, threads: 1, ...over });
const reading = (procs: Array<[number, ProcCounters]>, root = proc()): TreeReading => ({ root, procs: new Map(procs) });

describe("parseCounters", () => {
  it("reads the fields after the command name (which may hold ') ') and SIGCHLD's bit of sigignore", () => {
    expect(parseCounters(stat("0", 3))).toEqual({ ppid: 7, start: 12345, ownTicks: 11 + 13, reapedTicks: 17 + 19, reapedFaults: 5 + 2, threads: 3, ignoresChld: false });
    expect(parseCounters(stat(String(1 << 16)))?.ignoresChld).toBe(true);
    expect(parseCounters(stat(String(1 << 15)))?.ignoresChld).toBe(false);
    expect(parseCounters(stat(String(3 << 16)))?.ignoresChld).toBe(true);
  });

  it("is undefined for a text it cannot use", () => {
    expect(parseCounters("42 no parens")).toBeUndefined();
    expect(parseCounters("42 (a) S 7 42")).toBeUndefined();
    expect(parseCounters(stat("-1"))).toBeUndefined();
    expect(parseCounters(stat("0").replace(" 12345 ", " x "))).toBeUndefined();
  });

  it("reads this process's own stat", () => {
    const c = parseCounters(readFileSync("/proc/self/stat", "latin1"));
    expect(c).toMatchObject({ ppid: process.ppid, ignoresChld: false });
    expect(c!.ownTicks).toBeGreaterThan(0);
    expect(c!.threads).toBeGreaterThan(1);
  });
});

describe("tree readings", () => {
  it("treeTicks: every process's own and reaped time, and what the root reaped, never the root's own", () => {
    const r = reading([[10, proc({ ownTicks: 5, reapedTicks: 7 })], [11, proc({ ownTicks: 2 })]], proc({ ownTicks: 1000, reapedTicks: 3 }));
    expect(treeTicks(r)).toBe(5 + 7 + 2 + 3);
  });

  it("losesChildren: any process of the reading, the root too, with SIGCHLD ignored", () => {
    expect(losesChildren(reading([[10, proc()]]))).toBe(false);
    expect(losesChildren(reading([[10, proc()], [11, proc({ ignoresChld: true })]]))).toBe(true);
    expect(losesChildren(reading([[10, proc()]], proc({ ignoresChld: true })))).toBe(true);
  });

  it("aloneChain: the worker and its launchers up to the root, only when nothing else is there", () => {
    // root -> 10 (bwrap) -> 11 (init) -> 12 (worker)
    const chain: Array<[number, ProcCounters]> = [[10, proc({ ppid: 1 })], [11, proc({ ppid: 10 })], [12, proc({ ppid: 11 })]];
    expect(aloneChain(reading(chain), 12)).toEqual([12, 11, 10]);
    expect(aloneChain(reading([...chain, [13, proc({ ppid: 12 })]]), 12)).toBeUndefined();
    expect(aloneChain(reading([...chain, [14, proc({ ppid: 1 })]]), 12)).toBeUndefined();
    expect(aloneChain(reading(chain), 99)).toBeUndefined();
    expect(aloneChain(reading([]), 12)).toBeUndefined();
  });

  it("readTree walks the real children below a root, and none of its siblings", async () => {
    const child = spawn("sh", ["-c", "sleep 30 & wait"], { stdio: "ignore" });
    try {
      const reader = new TreeReader();
      let tree: TreeReading | undefined;
      for (let i = 0; i < 100; i++) {
        tree = reader.read(process.pid);
        if ([...tree!.procs.values()].some((p) => p.ppid === child.pid)) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(tree!.procs.get(child.pid!)).toMatchObject({ ppid: process.pid });
      const grandchild = [...tree!.procs.entries()].find(([, p]) => p.ppid === child.pid);
      expect(grandchild).toBeDefined();
      expect(tree!.procs.has(process.ppid)).toBe(false);
      expect(reader.read(4_000_000)).toBeUndefined();
      // The same reader again, the files kept open: the same tree.
      expect([...reader.read(process.pid)!.procs.keys()]).toEqual(expect.arrayContaining([child.pid, grandchild![0]]));
      reader.close();
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe("the kernel's own stat", () => {
  it("says SIGCHLD is ignored in a process that ignores it, and not in one that does not", () => {
    const read = (code: string) => parseCounters(execFileSync("python3", ["-c", `import signal\n${code}\nprint(open('/proc/self/stat').read())`], { encoding: "latin1" }));
    expect(read("signal.signal(signal.SIGCHLD, signal.SIG_IGN)")?.ignoresChld).toBe(true);
    expect(read("signal.signal(signal.SIGCHLD, lambda *a: None)")?.ignoresChld).toBe(false);
  });
});

describe("parseCounters in place", () => {
  it("agrees with a plain split over real stats and long sigignore masks", () => {
    const bySplit = (text: string) => {
      const f = text.slice(text.lastIndexOf(")") + 2).trim().split(" ");
      const n = (i: number) => Number(f[i]);
      return { ppid: n(1), start: n(19), ownTicks: n(11) + n(12), reapedTicks: n(13) + n(14), reapedFaults: n(8) + n(10), threads: n(17), ignoresChld: ((BigInt(f[30]!) >> 16n) & 1n) === 1n };
    };
    for (const pid of ["self", String(process.ppid), "1"]) {
      const text = readFileSync(`/proc/${pid}/stat`, "latin1");
      expect(parseCounters(text)).toEqual(bySplit(text));
    }
    for (const mask of ["18446744073709551615", "18446744073709486079", "65536", "65535", "131072", "196608"]) {
      const text = stat(mask);
      expect(parseCounters(text)).toEqual(bySplit(text));
    }
  });
});

describe("the in-place parsers against the string ones they replaced", () => {
  // The former parseCounters, over the text: the reference for every input.
  function byText(stat: string): ProcCounters | undefined {
    const close = stat.lastIndexOf(")");
    if (close < 0) return undefined;
    const values: number[] = [];
    let ignoresChld = false;
    let at = close + 2;
    const wanted = (f: number) => f === 1 || (f >= 8 && f <= 14) || f === 17 || f === 19 || f === 30;
    for (let field = 0; field <= 30; field++) {
      const space = stat.indexOf(" ", at);
      const end = space < 0 ? stat.length : space;
      if (wanted(field)) {
        if (end === at || end - at > 20) return undefined;
        let value = 0;
        for (let i = at; i < end; i++) {
          const c = stat.charCodeAt(i) - 48;
          if (c < 0 || c > 9) {
            if (field === 30 && i === end - 1 && stat.charCodeAt(i) === 10) break;
            return undefined;
          }
          value = field === 30 ? (value * 10 + c) % (1 << 17) : value * 10 + c;
        }
        if (field === 30) ignoresChld = value >= 1 << 16;
        values[field] = value;
      }
      if (space < 0 && field < 30) return undefined;
      at = end + 1;
    }
    return { ppid: values[1]!, start: values[19]!, ownTicks: values[11]! + values[12]!, reapedTicks: values[13]! + values[14]!, reapedFaults: values[8]! + values[10]!, threads: values[17]!, ignoresChld };
  }
  const byFields = (text: string) => text.split(" ").filter(Boolean).map(Number);

  // Stat-like texts: a command name (with parentheses, spaces, non-ASCII), then fields of digits
  // mostly, sometimes a sign, a letter, a newline, an empty or an overlong field.
  const field = fc.oneof(
    { weight: 8, arbitrary: fc.stringMatching(/^[0-9]{1,20}$/) },
    { weight: 1, arbitrary: fc.constantFrom("", "-1", "S", "x", "1\n", "\n", "123456789012345678901", "1 2", "é", "0\n1") },
  );
  const statText = fc.tuple(fc.string({ maxLength: 12 }), fc.array(field, { minLength: 25, maxLength: 40 }), fc.constantFrom("", "\n", " ")).map(
    ([name, fields, tail]) => `42 (${name}) ${fields.join(" ")}${tail}`,
  );

  it("parseCounters reads bytes and text as the former text parser, on real stats and random ones", () => {
    for (const pid of ["self", String(process.ppid), "1"]) {
      const bytes = readFileSync(`/proc/${pid}/stat`);
      expect(parseCounters(bytes)).toEqual(byText(bytes.toString("utf8")));
    }
    fc.assert(
      fc.property(fc.oneof(statText, fc.string({ maxLength: 80 })), (text) => {
        const want = byText(text);
        expect(parseCounters(text)).toEqual(want);
        expect(parseCounters(Buffer.from(text, "utf8"))).toEqual(want);
      }),
      { numRuns: 2000 },
    );
  });

  it("parseChildren reads plain pid lists as split and Number did, and refuses anything else untouched", () => {
    expect(parseChildren(Buffer.from(""), [])).toBe(true);
    const out = [7];
    expect(parseChildren(Buffer.from("12 345 "), out)).toBe(true);
    expect(out).toEqual([7, 12, 345]);
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.nat(), fc.constantFrom("x", "-1", "1e3", "", "\n")), { maxLength: 8 }), fc.constantFrom("", " "), (fields, tail) => {
        const text = fields.join(" ") + tail;
        const got: number[] = [99];
        if (parseChildren(Buffer.from(text), got)) expect(got).toEqual([99, ...byFields(text)]);
        else {
          expect(got).toEqual([99]);
          expect(/^[0-9 ]*$/.test(text)).toBe(false);
        }
      }),
      { numRuns: 1000 },
    );
  });
});
