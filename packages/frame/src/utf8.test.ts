import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runs } from "../test/support/runs";
import { decodeUtf8, firstInvalidUtf8 } from "./utf8";

const fatal = new TextDecoder("utf-8", { fatal: true });
// One reference decoder for the property: decode() without `stream` starts fresh each call, also
// after a throw, and constructing one per case was most of this file's time.
const reference = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** decodeUtf8 gives the reference's text, or FRAME_INVALID_UTF8 exactly where the reference throws. */
function expectAsReference(bytes: Uint8Array): void {
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
  }
  expect(got).toBe(want);
}

describe("UTF-8", () => {
  it("keeps a leading BOM instead of swallowing it", () => {
    expect(decodeUtf8(Uint8Array.of(0xef, 0xbb, 0xbf, 0x31))).toBe("\ufeff1");
    // Past 1 KiB too.
    const long = new Uint8Array(2000).fill(0x31);
    long.set([0xef, 0xbb, 0xbf]);
    expect(decodeUtf8(long)).toBe(`\ufeff${"1".repeat(1997)}`);
  });

  it("decodeUtf8 accepts exactly what the fatal TextDecoder accepts, with the same text", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 12 }), fc.string({ unit: "binary", maxLength: 8 }), (list, str) => {
        // Also past 1 KiB (the check once switched there; long texts are decoded two-byte more often).
        const long = new Uint8Array(1100 + list.length).fill(0x61);
        long.set(list, 1100);
        for (const bytes of [Uint8Array.from(list), new TextEncoder().encode(str), long]) expectAsReference(bytes);
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

  it("keeps a real U+FFFD (the lenient decoder's mark for a bad byte), and refuses a bad byte beside one", () => {
    const replacement = [0xef, 0xbf, 0xbd];
    for (const length of [0, 10, 2000]) {
      const pad = new Array<number>(length).fill(0x61);
      expect(decodeUtf8(Uint8Array.from([...pad, ...replacement]))).toBe(`${"a".repeat(length)}\ufffd`);
      expect(() => decodeUtf8(Uint8Array.from([...pad, ...replacement, 0xff]))).toThrow(
        expect.objectContaining({ code: "FRAME_INVALID_UTF8", message: `invalid UTF-8 at byte ${length + 3} (ff)` }),
      );
      expect(() => decodeUtf8(Uint8Array.from([0xc3, ...pad, ...replacement]))).toThrow(expect.objectContaining({ code: "FRAME_INVALID_UTF8" }));
    }
  });

  it("agrees with the fatal TextDecoder on random bytes around real U+FFFDs", () => {
    const piece = fc.oneof(fc.constant([0xef, 0xbf, 0xbd]), fc.constantFrom([0x41], [0xc3, 0xa9], [0xed, 0xa0, 0x80], [0xff], [0xef, 0xbf], [0xf0, 0x9f, 0x98, 0x80]));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 10 }), (pieces) => {
        expectAsReference(Uint8Array.from(pieces.flat()));
      }),
      { numRuns: runs(3000), seed: 13 },
    );
  });
});
