import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runs } from "../test/support/runs";
import { decodeUtf8, firstInvalidUtf8 } from "./utf8";

const fatal = new TextDecoder("utf-8", { fatal: true });
// One reference decoder for the property: decode() without `stream` starts fresh each call, also
// after a throw, and constructing one per case was most of this file's time.
const reference = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

describe("UTF-8", () => {
  it("keeps a leading BOM instead of swallowing it", () => {
    expect(decodeUtf8(Uint8Array.of(0xef, 0xbb, 0xbf, 0x31))).toBe("\ufeff1");
    // Past 1 KiB too, where the lenient decoder does the decoding.
    const long = new Uint8Array(2000).fill(0x31);
    long.set([0xef, 0xbb, 0xbf]);
    expect(decodeUtf8(long)).toBe(`\ufeff${"1".repeat(1997)}`);
  });

  it("decodeUtf8 accepts exactly what the fatal TextDecoder accepts, with the same text", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 12 }), fc.string({ unit: "binary", maxLength: 8 }), (list, str) => {
        // Also past 1 KiB, where the check switches to isUtf8 + a lenient decoder.
        const long = new Uint8Array(1100 + list.length).fill(0x61);
        long.set(list, 1100);
        for (const bytes of [Uint8Array.from(list), new TextEncoder().encode(str), long]) {
          let want: string | undefined;
          try {
            want = reference.decode(bytes);
          } catch {
            want = undefined;
          }
          let got: string | undefined;
          try {
            got = decodeUtf8(bytes);
          } catch (error) {
            expect(error).toMatchObject({ code: "FRAME_INVALID_UTF8" });
            got = undefined;
          }
          expect(got).toBe(want);
        }
      }),
      { numRuns: runs(5000), seed: 11 },
    );
  });

  it("firstInvalidUtf8 agrees with the fatal TextDecoder on random bytes", () => {
    const interesting = fc.constantFrom(0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff);
    fc.assert(
      fc.property(fc.array(fc.oneof(interesting, fc.integer({ min: 0, max: 255 })), { maxLength: 12 }), (list) => {
        const bytes = Uint8Array.from(list);
        let valid = true;
        try {
          fatal.decode(bytes);
        } catch {
          valid = false;
        }
        const at = firstInvalidUtf8(bytes);
        expect(at === bytes.length).toBe(valid);
        if (!valid) expect(() => fatal.decode(bytes.subarray(0, at))).not.toThrow();
      }),
      { numRuns: runs(5000), seed: 7 },
    );
  });

  it("firstInvalidUtf8 finds the edges of every lead-byte range (deterministic, at full strength under pnpm mutate too)", () => {
    const cases: [number[], number][] = [
      // Two bytes: c2..df.
      [[0xc1, 0xbf], 0], [[0xc2, 0x80], 2], [[0xdf, 0xbf], 2], [[0xdf, 0xc0], 0],
      // Three bytes: e0 needs a0.., ed at most 9f (no UTF-16 surrogates), the rest 80..bf.
      [[0xe0, 0x9f, 0xbf], 0], [[0xe0, 0xa0, 0x80], 3], [[0xe1, 0x80, 0x80], 3], [[0xe1, 0xbf, 0xbf], 3],
      [[0xec, 0xa0, 0x80], 3], [[0xed, 0x9f, 0xbf], 3], [[0xed, 0xa0, 0x80], 0], [[0xee, 0xa0, 0x80], 3],
      [[0xef, 0xbf, 0xbf], 3], [[0xe1, 0x80, 0xc0], 0],
      // Four bytes: f0 needs 90.., f4 at most 8f (U+10FFFF), the rest 80..bf; f5 and up never.
      [[0xf0, 0x8f, 0xbf, 0xbf], 0], [[0xf0, 0x90, 0x80, 0x80], 4], [[0xf1, 0x80, 0x80, 0x80], 4],
      [[0xf3, 0xbf, 0xbf, 0xbf], 4], [[0xf1, 0x90, 0x80, 0x80], 4], [[0xf4, 0x8f, 0xbf, 0xbf], 4], [[0xf4, 0x90, 0x80, 0x80], 0],
      [[0xf5, 0x80, 0x80, 0x80], 0],
      // Offsets past valid text, and a sequence cut short by the end.
      [[0x41, 0xc3, 0xa9, 0xe2, 0x82], 3],
    ];
    for (const [list, at] of cases) {
      const bytes = Uint8Array.from(list);
      const hex = list.map((b) => b.toString(16)).join(" ");
      expect(firstInvalidUtf8(bytes), hex).toBe(at);
      // The table itself agrees with the fatal TextDecoder.
      if (at === list.length) expect(() => fatal.decode(bytes), hex).not.toThrow();
      else expect(() => fatal.decode(bytes), hex).toThrow();
    }
  });

  it("names the first bad byte and the (at most 4) bytes from there, two hex digits each", () => {
    expect(() => decodeUtf8(Uint8Array.of(0x31, 0x80, 0x05, 0x41, 0x42, 0x43))).toThrow(
      expect.objectContaining({ code: "FRAME_INVALID_UTF8", message: "invalid UTF-8 at byte 1 (80 05 41 42)" }),
    );
  });

  it("keeps the fatal TextDecoder's error as the cause up to 1 KiB; past it isUtf8 decides and there is none", () => {
    const bytes = (length: number) => new Uint8Array(length).fill(0x61).fill(0xff, length - 1);
    const error = (length: number) => {
      try {
        decodeUtf8(bytes(length));
      } catch (thrown) {
        return thrown as Error;
      }
      throw new Error("expected FRAME_INVALID_UTF8");
    };
    for (const length of [1, 1024]) {
      expect(error(length)).toMatchObject({ code: "FRAME_INVALID_UTF8", message: `invalid UTF-8 at byte ${length - 1} (ff)` });
      expect(error(length).cause, String(length)).toBeInstanceOf(TypeError);
    }
    expect(error(1025)).toMatchObject({ code: "FRAME_INVALID_UTF8", message: "invalid UTF-8 at byte 1024 (ff)" });
    expect(error(1025).cause).toBeUndefined();
  });
});
