// The decoder's fast path (JSON.parse + one walk) must never decide differently from the
// exhaustive lexical check it skips; both see the differential corpus and the vectors.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runs } from "./support/runs";
import { decodePayload, decodePayloadExhaustively } from "../src/decode";
import { isFrameError } from "../src/errors";
import { inspectParsed } from "../src/inspect";
import { differentialCorpus, rng, spliceText, frameOf } from "./support/corpus";

function outcome(decode: (b: Uint8Array) => unknown, payload: Uint8Array): string {
  try {
    return `ok ${JSON.stringify(decode(payload))}`;
  } catch (error) {
    if (!isFrameError(error)) throw error;
    return error.code;
  }
}

const utf8 = (s: string) => new TextEncoder().encode(s);

describe("fast path vs exhaustive check", () => {
  it("agree on 4,000 seeded payloads (whole streams used as payloads)", () => {
    for (const stream of differentialCorpus(99, runs(4000))) {
      const payload = stream.length > 4 ? stream.subarray(4) : stream;
      expect(outcome(decodePayload, payload)).toBe(outcome(decodePayloadExhaustively, payload));
    }
  });

  it("agree on spliced texts with colons and escapes in strings", () => {
    const next = rng(5);
    const extras = ['"a:b"', '"\\u003a"', '":"', '{"k:":1,"k:":2}', '{"x":"::","x":"::"}', '{"a":"\\u003a","b":1}', '{"a\\u003a":1,"a:":2}'];
    for (let i = 0; i < runs(3000); i++) {
      let text = spliceText(next);
      if (next() < 0.5) text = `[${text},${extras[Math.floor(next() * extras.length)]}]`;
      const payload = utf8(text);
      expect(outcome(decodePayload, payload), text).toBe(outcome(decodePayloadExhaustively, payload));
    }
  });

  it("agree on long texts full of colons or escaped quotes in strings (either walk of keyBound)", () => {
    const next = rng(11);
    const fillers = ['"' + "step 1: ok ✓\\n".repeat(400) + '"', '"' + 'say \\"hi\\" '.repeat(400) + '"', '"' + "a\\\":b ".repeat(200) + '"'];
    for (let i = 0; i < runs(600); i++) {
      const filler = fillers[Math.floor(next() * fillers.length)]!;
      const text = next() < 0.5 ? `[${filler},${spliceText(next)}]` : `{"f":${filler},"g":${spliceText(next)}${next() < 0.3 ? ',"f":1' : ""}}`;
      const payload = utf8(text);
      expect(outcome(decodePayload, payload), text.slice(-80)).toBe(outcome(decodePayloadExhaustively, payload));
    }
  });

  it("catches a duplicate hidden by colons in strings", () => {
    const payload = frameOf('{"a":"x:y","a":"x:y"}').subarray(4);
    expect(outcome(decodePayload, payload)).toBe("FRAME_DUPLICATE_KEY");
    expect(outcome(decodePayload, utf8('{"a:":1,"a:":2}'))).toBe("FRAME_DUPLICATE_KEY");
    expect(outcome(decodePayload, utf8('{"a\\u003a":1,"a:":2}'))).toBe("FRAME_DUPLICATE_KEY");
    expect(outcome(decodePayload, utf8('{"a\\u003a":1,"b:":2}'))).toBe('ok {"a:":1,"b:":2}');
  });
});

// Prints a value as JSON the way a hostile or careless producer might: numbers in any spelling that
// reads back the same (exponents make round numbers shorter than the walk assumes), characters as
// \u escapes, whitespace, and entries repeated with another value. `pick` chooses each time.
function spell(value: unknown, pick: (n: number) => number): string {
  const space = () => [" ", "", "", "", "\n"][pick(5)]!;
  if (typeof value === "number") {
    const forms = [String(value), value.toExponential().replace("e+", "e"), `${value}0`.includes(".") ? `${value}0` : String(value)];
    const form = forms[pick(forms.length)]!;
    return Object.is(Number(form), value) ? form : String(value);
  }
  if (typeof value === "string") {
    if (pick(4) !== 0) return JSON.stringify(value);
    return `"${Array.from(value, (c) => (pick(3) === 0 ? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}` : JSON.stringify(c).slice(1, -1))).join("")}"`;
  }
  if (Array.isArray(value)) return `[${value.map((v) => space() + spell(v, pick)).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).map(([k, v]) => `${spell(k, pick)}${space()}:${spell(v, pick)}`);
    if (entries.length > 0 && pick(4) === 0) entries.push(`${entries[pick(entries.length)]!.split(":")[0]}:${spell(pick(2000) * 10, pick)}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value);
}

describe("fast path on respelled texts (Inspection.spelled)", () => {
  const json = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: "small" },
      fc.string({ maxLength: 6 }),
      fc.constantFrom("\ud800", "\udfff", "😀", "a\u0000b", '"', "\\"),
      fc.integer({ min: -20_000, max: 20_000 }).map((n) => n * [1, 10, 1000, 0.25, 0.1][Math.abs(n) % 5]!),
      fc.constantFrom(true, false, null, 1e21, 2 ** 53, 9_007_199_254_740_991, 0.001),
      fc.array(tie("v"), { maxLength: 4 }),
      fc.dictionary(fc.constantFrom("a", "b", "k", "", "é", "\u00e9", "1", "10"), tie("v"), { maxKeys: 4 }),
    ),
  })).v;

  it("never counts more characters than a text of the value holds, and agrees with the exhaustive check", () => {
    fc.assert(
      fc.property(json, fc.array(fc.nat(), { minLength: 64, maxLength: 64 }), (value, choices) => {
        let at = 0;
        const text = spell(value, (n) => choices[at++ % choices.length]! % n);
        const payload = utf8(text);
        const seen = inspectParsed(JSON.parse(text), false);
        if (seen.clean) expect(seen.spelled, text).toBeLessThanOrEqual(text.length);
        expect(outcome(decodePayload, payload), text).toBe(outcome(decodePayloadExhaustively, payload));
      }),
      { numRuns: runs(20_000), seed: 43 },
    );
  });

  it("counts a compact text exactly, and sees through a duplicate or \\u escape however the rest is spelled", () => {
    const compact = '{"version":1,"id":"r-1","n":[0,-7,12.5,null,true,false,{}],"s":"é😀"}';
    expect(inspectParsed(JSON.parse(compact)).spelled).toBe(compact.length);
    // A duplicate entry costs 5 characters at least; four round numbers in exponent form give back 4.
    expect(outcome(decodePayload, utf8('{"a":1000,"b":2000,"c":3000,"d":4000,"":0,"":1}'))).toBe("FRAME_DUPLICATE_KEY");
    expect(outcome(decodePayload, utf8('{"a":1e3,"b":2e3,"c":3e3,"d":4e3,"":0,"":1}'))).toBe("FRAME_DUPLICATE_KEY");
    expect(outcome(decodePayload, utf8('{"a":1e3,"b":2e3,"c":3e3,"d":4e3,"e":"\\ud800"}'))).toBe("FRAME_LONE_SURROGATE");
    expect(outcome(decodePayload, utf8('{"a":1000,"b":2000,"c":3000,"d":4000,"e":"\\u0041"}'))).toBe('ok {"a":1000,"b":2000,"c":3000,"d":4000,"e":"A"}');
  });
});
