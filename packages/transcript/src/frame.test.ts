import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadVectors, thrownCode } from "../test/vectors.js";
import type { InputEvent, ResultFacts } from "./event.js";
import { frameInput, frameInputLine, frameResult } from "./frame.js";

describe("frameInput vectors", () => {
  for (const v of loadVectors("input-frames.json")) {
    it(v.description, () => {
      const event = v.input as InputEvent;
      if (v.error) expect(thrownCode(() => frameInput(event))).toBe(v.error.code);
      else expect(frameInput(event)).toBe(v.expected);
    });
  }
});

describe("frameResult vectors", () => {
  for (const v of loadVectors("result-frames.json")) {
    it(v.description, () => {
      const facts = v.input as ResultFacts;
      if (v.error) expect(thrownCode(() => frameResult(facts))).toBe(v.error.code);
      else expect(frameResult(facts)).toBe(v.expected);
    });
  }
});

describe("frameInput", () => {
  it("says time unknown for NaN and infinities, which JSON vectors cannot carry", () => {
    for (const t of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const event: InputEvent = { source: "operator", received_at_ms: t, payload: { text: "x" } };
      expect(frameInput(event)).toBe("[time unknown · operator]\nx");
    }
  });

  it("keeps any stored text byte-exact after the first newline and never mutates the event", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.integer({ min: 1, max: 4_102_444_800_000 }), (text, ms) => {
        const event: InputEvent = {
          source: "operator",
          received_at_ms: ms,
          payload: { text, peer_request: { id: "r-1", session: "s.2" } },
        };
        const before = structuredClone(event);
        const framed = frameInput(event);
        const newline = framed.indexOf("\n");
        expect(framed.slice(0, newline)).toBe(frameInputLine(event));
        expect(framed.slice(newline + 1)).toBe(text);
        expect(Buffer.from(framed.slice(newline + 1), "utf8").equals(Buffer.from(text, "utf8"))).toBe(true);
        expect(event).toStrictEqual(before);
      }),
    );
  });

  it("derives the frame again on every call, from the event as it is now", () => {
    const event: InputEvent = { source: "operator", received_at_ms: null, payload: { text: "hi" } };
    expect(frameInput(event)).toBe("[time unknown · operator]\nhi");
    event.received_at_ms = 1789325940000;
    expect(frameInput(event)).toBe("[2026-09-13T18:59:00Z · operator]\nhi");
  });

  it("uses U+00B7 between the stamp and the label", () => {
    const line = frameInputLine({ source: "operator", received_at_ms: 1789325940000, payload: { text: "" } });
    expect([...line].filter((ch) => ch === "\u00b7")).toHaveLength(1);
    expect(line).toContain("Z \u00b7 operator]");
  });
});

describe("frameResult", () => {
  it("says time unknown for NaN, which JSON vectors cannot carry", () => {
    expect(frameResult({ observed_at_ms: Number.NaN, duration_ms: 1500 })).toBe("[time unknown · ran 1.5s]");
  });

  it("refuses a non-object, naming it", () => {
    expect(thrownCode(() => frameResult(null as unknown as ResultFacts))).toBe("TRANSCRIPT_INVALID_EVENT");
    expect(() => frameResult(42 as unknown as ResultFacts)).toThrow(/42/);
  });
});
