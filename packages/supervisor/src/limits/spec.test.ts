import { describe, expect, it } from "vitest";
import { formatLimits, formatValue, hasLimits, LimitsSyntaxError, parseLimits } from "./spec.js";

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

function failure(text: string | string[]): LimitsSyntaxError {
  try {
    parseLimits(text);
  } catch (err) {
    expect(err).toBeInstanceOf(LimitsSyntaxError);
    return err as LimitsSyntaxError;
  }
  throw new Error(`${JSON.stringify(text)} parsed`);
}

describe("parseLimits", () => {
  it("reads the example of C17", () => {
    expect(parseLimits("memory=2GiB,cpu=10m,procs=512,file=1GiB,tmp=512MiB")).toEqual({
      memoryBytes: 2 * GiB,
      cpuMs: 600_000,
      procs: 512,
      fileBytes: GiB,
      tmpBytes: 512 * MiB,
    });
  });

  it("sets nothing for an empty or blank text, and each limit is optional", () => {
    expect(parseLimits("")).toEqual({});
    expect(parseLimits("  ")).toEqual({});
    expect(parseLimits([])).toEqual({});
    expect(parseLimits("procs=64")).toEqual({ procs: 64 });
    expect(hasLimits(parseLimits(""))).toBe(false);
    expect(hasLimits(parseLimits("file=1MiB"))).toBe(true);
  });

  it("takes every size unit, binary, with spaces around items", () => {
    expect(parseLimits(" memory = 67108864 ").memoryBytes).toBe(64 * MiB);
    expect(parseLimits("memory=67108864B").memoryBytes).toBe(64 * MiB);
    expect(parseLimits("file=2048K").fileBytes).toBe(2 * MiB);
    expect(parseLimits("file=2048KiB").fileBytes).toBe(2 * MiB);
    expect(parseLimits("memory=64M").memoryBytes).toBe(64 * MiB);
    expect(parseLimits("memory=1G").memoryBytes).toBe(GiB);
    expect(parseLimits("file=1T").fileBytes).toBe(1024 * GiB);
    expect(parseLimits("file=1TiB").fileBytes).toBe(1024 * GiB);
    expect(parseLimits("memory=1.5GiB").memoryBytes).toBe(1.5 * GiB);
  });

  it("takes durations with a unit, combined ones too", () => {
    expect(parseLimits("cpu=2s").cpuMs).toBe(2000);
    expect(parseLimits("cpu=1500ms").cpuMs).toBe(1500);
    expect(parseLimits("cpu=1m30s").cpuMs).toBe(90_000);
    expect(parseLimits("cpu=1h").cpuMs).toBe(3_600_000);
    expect(parseLimits("cpu=1.5s").cpuMs).toBe(1500);
  });

  it("merges several texts (a repeated --limit)", () => {
    expect(parseLimits(["memory=64MiB", "cpu=2s,procs=32"])).toEqual({ memoryBytes: 64 * MiB, cpuMs: 2000, procs: 32 });
  });

  it("names the bad part of every malformed text", () => {
    expect(failure("memory=lots")).toMatchObject({ part: "memory=lots", code: "LIMITS_INVALID" });
    expect(failure("memory=lots").message).toMatch(/"lots" is not a size/);
    expect(failure("cpu=10m,memory=lots").part).toBe("memory=lots");
    expect(failure("disk=1GiB").message).toMatch(/unknown limit "disk" \(known: memory, cpu, procs, file, tmp\)/);
    expect(failure("memory").message).toMatch(/expected name=value/);
    expect(failure("memory=").message).toMatch(/the value is empty/);
    expect(failure("memory=64MiB,,cpu=2s").message).toMatch(/empty item/);
    expect(failure("memory=64MiB,").message).toMatch(/empty item/);
    expect(failure("memory=1GB").message).toMatch(/unknown size unit "GB" \(use GiB: sizes are binary\)/);
    expect(failure("memory=1gib").message).toMatch(/unknown size unit "gib"/);
    expect(failure("memory=-1GiB").message).toMatch(/is not a size/);
    expect(failure("memory=1.5").message).toMatch(/whole number/);
    expect(failure("cpu=10").message).toMatch(/needs a unit/);
    expect(failure("cpu=10x").message).toMatch(/is not a duration/);
    expect(failure("cpu=10m5").message).toMatch(/is not a duration/);
    expect(failure("cpu=m").message).toMatch(/is not a duration/);
    expect(failure("procs=1.5").message).toMatch(/not a whole number of processes/);
    expect(failure("procs=-3").message).toMatch(/not a whole number/);
    expect(failure("memory=1GiB,memory=2GiB").message).toMatch(/memory is given twice/);
    expect(failure(["procs=8", "procs=9"]).part).toBe("procs=9");
    expect(failure("file=99999999999999999TiB").message).toMatch(/too large/);
  });

  it("refuses values at which the worker could not start, saying the minimum", () => {
    expect(failure("memory=1MiB").message).toMatch(/memory must be at least 16MiB/);
    expect(parseLimits("memory=16MiB").memoryBytes).toBe(16 * MiB);
    expect(failure("cpu=999ms").message).toMatch(/cpu must be at least 1s/);
    expect(parseLimits("cpu=1s").cpuMs).toBe(1000);
    expect(failure("procs=3").message).toMatch(/at least 4/);
    expect(parseLimits("procs=4").procs).toBe(4);
    expect(failure("file=1023").message).toMatch(/at least 1KiB/);
    expect(failure("tmp=1KiB").message).toMatch(/at least 1MiB/);
    expect(failure("procs=0").message).toMatch(/at least 4/);
  });
});

describe("formatLimits", () => {
  it("prints the canonical text, which parses back to the same limits", () => {
    const text = "memory=2GiB,cpu=10m,procs=512,file=1GiB,tmp=512MiB";
    expect(formatLimits(parseLimits(text))).toBe(text);
    const odd = parseLimits("tmp=1025KiB,cpu=1m30s,memory=16777217,file=3000");
    expect(formatLimits(odd)).toBe("memory=16777217B,cpu=90s,file=3000B,tmp=1025KiB");
    expect(parseLimits(formatLimits(odd))).toEqual(odd);
    expect(formatLimits({})).toBe("");
    expect(formatValue("cpu", 1500)).toBe("1500ms");
    expect(formatValue("cpu", 7_200_000)).toBe("2h");
  });
});
