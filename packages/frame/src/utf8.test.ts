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
});
