import { describe, expect, it } from "vitest";
import { MAX_IDLE_TIMEOUT_MS, parseIdleTimeout, parseLease, parseMaxCells, parseSpares } from "./pool-options";

describe("--idle-timeout", () => {
  it("reads ms, s, m and h, and off", () => {
    expect(parseIdleTimeout("500ms")).toBe(500);
    expect(parseIdleTimeout("30s")).toBe(30_000);
    expect(parseIdleTimeout("5m")).toBe(300_000);
    expect(parseIdleTimeout("2h")).toBe(7_200_000);
    expect(parseIdleTimeout("off")).toBeUndefined();
  });

  it("takes 1ms and 168h, refuses 0, one past a week, and what is not a duration, naming it", () => {
    expect(parseIdleTimeout("1ms")).toBe(1);
    expect(parseIdleTimeout("168h")).toBe(MAX_IDLE_TIMEOUT_MS);
    for (const bad of ["0s", "0ms", `${MAX_IDLE_TIMEOUT_MS + 1}ms`, "169h", "30", "1.5s", "-1s", "thirty", ""]) {
      expect(() => parseIdleTimeout(bad)).toThrow(expect.objectContaining({ code: "CLI_USAGE", message: expect.stringContaining(JSON.stringify(bad)) }));
    }
  });
});

describe("--spare", () => {
  it("takes 0 to 64 and refuses 65, negatives and fractions", () => {
    expect(parseSpares("0")).toBe(0);
    expect(parseSpares("1")).toBe(1);
    expect(parseSpares("64")).toBe(64);
    for (const bad of ["65", "-1", "1.5", "one", ""]) expect(() => parseSpares(bad)).toThrow(expect.objectContaining({ code: "CLI_USAGE" }));
  });
});

describe("--max-cells-per-turn", () => {
  it("takes 1 to 1000 and refuses 0, 1001, negatives and fractions, naming the value", () => {
    expect(parseMaxCells("1")).toBe(1);
    expect(parseMaxCells("50")).toBe(50);
    expect(parseMaxCells("1000")).toBe(1000);
    for (const bad of ["0", "1001", "-1", "1.5", "fifty", ""]) {
      expect(() => parseMaxCells(bad)).toThrow(expect.objectContaining({ code: "CLI_USAGE", message: `--max-cells-per-turn needs a whole number from 1 to 1000, got ${JSON.stringify(bad)}` }));
    }
  });
});

describe("--lease", () => {
  it("reads ms, s, m and h from 500ms to 1h", () => {
    expect(parseLease("10s")).toBe(10_000);
    expect(parseLease("500ms")).toBe(500);
    expect(parseLease("2m")).toBe(120_000);
    expect(parseLease("1h")).toBe(3_600_000);
  });

  it("refuses what is shorter, longer or not a duration, naming it", () => {
    for (const bad of ["499ms", "0s", "61m", "2h", "10", "1.5s", "-1s", "off", "ten", ""]) {
      expect(() => parseLease(bad)).toThrow(expect.objectContaining({ code: "CLI_USAGE", message: expect.stringContaining(JSON.stringify(bad)) }));
    }
  });
});
