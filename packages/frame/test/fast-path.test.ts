// The decoder's fast path (JSON.parse + one walk) must never decide differently from the
// exhaustive lexical check it skips; both see the differential corpus and the vectors.
import { describe, expect, it } from "vitest";
import { runs } from "./support/runs";
import { decodePayload, decodePayloadExhaustively } from "../src/decode";
import { isFrameError } from "../src/errors";
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
