import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { statCpuMs, statusBytes } from "./usage.js";

/** What statCpuMs computed before its in-place read: every field split out, four summed as Numbers. */
function bySplit(text: string, ticksPerSecond = 100): number | undefined {
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0);
  return Number.isFinite(ticks) ? Math.round((ticks * 1000) / ticksPerSecond) : undefined;
}

function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const PIECES = ["0", "7", "152", "33", "123456789012345", "1234567890123456", "18446744073709551615", "-1", "", "1e3", "0x1f", " 5", "4\n", "S", "(x) y", ")", "12.5"];

describe("statCpuMs", () => {
  it("reads this process's own stat as the split does", () => {
    const text = readFileSync("/proc/self/stat", "utf8");
    expect(statCpuMs(text)).toBe(bySplit(text));
    expect(statCpuMs(text, 250)).toBe(bySplit(text, 250));
  });

  it("agrees with the split on 20,000 stat texts, regular and not (names with spaces and parentheses, short, odd fields)", () => {
    const next = random(17);
    const pick = () => PIECES[Math.floor(next() * PIECES.length)]!;
    for (let i = 0; i < 20000; i++) {
      const name = ["python3", "a b", "x) (y", ") ", ""][Math.floor(next() * 5)]!;
      const count = Math.floor(next() * 20);
      const fields: string[] = [];
      for (let f = 0; f < count; f++) fields.push(next() < 0.7 ? String(Math.floor(next() * 10 ** Math.floor(next() * 17))) : pick());
      const text = `${1 + Math.floor(next() * 99999)} (${name}) ${fields.join(next() < 0.9 ? " " : "  ")}${next() < 0.5 ? "\n" : ""}`;
      expect(statCpuMs(text), text).toBe(bySplit(text));
    }
  });

  it("is undefined where the split gives no finite sum", () => {
    expect(statCpuMs("1 (x) S 1 2 3")).toBeUndefined();
    expect(statCpuMs(undefined)).toBeUndefined();
  });
});

describe("statusBytes", () => {
  it("reads each key of a status text, again and again (the patterns are shared)", () => {
    const text = "Name:\tpython3\nVmHWM:\t   2048 kB\nVmRSS:\t   1024 kB\n";
    for (let i = 0; i < 3; i++) {
      expect(statusBytes(text, "VmHWM")).toBe(2048 * 1024);
      expect(statusBytes(text, "VmRSS")).toBe(1024 * 1024);
    }
    expect(statusBytes("Name:\tx\n", "VmHWM")).toBeUndefined();
  });
});
