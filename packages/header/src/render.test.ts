import { formatStamp as transcriptStamp } from "@klbr/transcript";
import { beforeEach, describe, expect, it } from "vitest";
import { sha256Hex } from "./digest.js";
import { describeActor, formatStamp, renderObservation, renderPatches } from "./render.js";
import { observe, pinAtStart } from "./rules.js";

describe("formatStamp", () => {
  it("is ISO with a Z and whole seconds, rounded down", () => {
    expect(formatStamp(1_789_329_293_999)).toBe("2026-09-13T19:54:53Z");
    expect(formatStamp(1_000)).toBe("1970-01-01T00:00:01Z");
    expect(formatStamp(253_402_300_799_999)).toBe("9999-12-31T23:59:59Z");
  });

  it("gives @klbr/transcript's answer for every stampable instant, epoch zero included", () => {
    for (const ms of [0, 1, 999, 1_000, 1_789_329_293_999, 253_402_300_799_999]) expect(formatStamp(ms)).toBe(transcriptStamp(ms));
    expect(transcriptStamp(0)).toBe("time unknown");
  });

  it("says time unknown for epoch zero and refuses what it cannot stamp", () => {
    expect(formatStamp(0)).toBe("time unknown");
    expect(() => formatStamp(-1)).toThrow(expect.objectContaining({ code: "HEADER_INVALID_TIME" }));
    expect(() => formatStamp(Number.NaN)).toThrow(expect.objectContaining({ code: "HEADER_INVALID_TIME" }));
  });
});

describe("describeActor", () => {
  it("never names an actor for a host change, whatever else is known", () => {
    expect(describeActor({ origin: "host", reason: "r", path: "/p" })).toBe("changed outside this transcript");
    expect(describeActor({ origin: "session", execution_id: "e-1", step: 0 })).toBe("changed by this session (execution e-1, step 0)");
  });
});

describe("renderPatches", () => {
  it("numbers each source's hunks separately", () => {
    const text = renderPatches([
      { source: "a", start_line: 1, old_lines: ["x\n"], new_lines: ["y\n", "z\n"] },
      { source: "b", start_line: 3, old_lines: ["q\n"], new_lines: [] },
      { source: "a", start_line: 5, old_lines: ["w\n"], new_lines: ["v\n"] },
    ]);
    expect(text).toBe("@@ a -1,1 +1,2 @@\n-x\n+y\n+z\n@@ b -3,1 +3,0 @@\n-q\n@@ a -5,1 +6,1 @@\n-w\n+v\n");
  });
});

describe("renderObservation", () => {
  // Built per test (not at collection): code run while vitest collects counts as "static" for
  // Stryker, which then reruns the whole suite for every mutant of it.
  let pin: ReturnType<typeof pinAtStart>;
  let first: NonNullable<ReturnType<typeof observe>>;
  let second: NonNullable<ReturnType<typeof observe>>;
  beforeEach(() => {
    pin = pinAtStart([{ name: "contract", text: "keep it short\n" }], 1);
    first = observe([pin], [{ name: "contract", text: "keep it short\nsay why\n" }], { origin: "host" }, 1_789_329_293_123)!;
    second = observe([pin, first], [{ name: "contract", text: "keep it short\nsay why\n" }, { name: "local", text: "x\n" }], { origin: "session", execution_id: "e", step: 2 }, 1_789_329_294_000)!;
  });

  it("renders an observation made by observe, patch included", () => {
    expect(renderObservation(first, pin.text)).toBe(
      "[2026-09-13T19:54:53Z · instructions changed for this runtime · changed outside this transcript]\n" +
        "the header of this transcript is the revision it started under; the text below is current from here on.\n" +
        "@@ instructions -2,0 +2,1 @@\n+say why\n",
    );
  });

  it("verifies a per-source patch against base sources, and shows the whole text against the wrong base", () => {
    const third = observe([pin, first], [{ name: "contract", text: "keep it short\nsay why\nthen stop\n" }], { origin: "host" }, 1_789_329_295_000)!;
    expect(third.change.form).toBe("diff");
    expect(renderObservation(third, first.sources)).toContain("@@ contract -3,0 +3,1 @@\n+then stop\n");
    expect(renderObservation(third, "unrelated\n").endsWith("\nkeep it short\nsay why\nthen stop\n")).toBe(true);
  });

  it("renders a session change with C9 wording and the joined patch when a source appeared", () => {
    expect(renderObservation(second, first.sources)).toBe(
      "[2026-09-13T19:54:54Z · instructions changed for this runtime · changed by this session (execution e, step 2)]\n" +
        "the header of this transcript is the revision it started under; the text below is current from here on.\n" +
        "@@ instructions -3,0 +3,1 @@\n+x\n",
    );
  });

  it("refuses a revision whose patch fails and whose sources do not join to its digest", () => {
    const broken = { ...first, digest: sha256Hex("nobody wrote this") };
    expect(() => renderObservation(broken, pin.text)).toThrow(expect.objectContaining({ code: "HEADER_SOURCE_MISMATCH" }));
  });
});
