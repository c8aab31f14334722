import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { runs } from "../test/helpers/runs.js";
import { isUtf8, showName } from "./names.js";

const fatal = new TextDecoder("utf-8", { fatal: true });

function decodes(bytes: Uint8Array): boolean {
  try {
    fatal.decode(bytes);
    return true;
  } catch {
    return false;
  }
}

describe("isUtf8 / showName", () => {
  it("agrees with a fatal TextDecoder on arbitrary bytes", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 24 }), (bytes) => isUtf8(bytes) === decodes(bytes)), { numRuns: runs(2000) });
  });

  it("shows valid UTF-8 unchanged", () => {
    fc.assert(fc.property(fc.string({ unit: "grapheme" }), (text) => showName(Buffer.from(text)) === text), { numRuns: runs(100) });
  });

  it("escapes exactly the bytes outside well-formed sequences, like Python's backslashreplace", () => {
    expect(showName(Buffer.from("a\xffb\xe2\x82", "latin1"))).toBe("a\\xffb\\xe2\\x82");
    expect(showName(Buffer.from("e2e282ac", "hex"))).toBe("\\xe2\u20ac");
    expect(showName(Buffer.from("eda080", "hex"))).toBe("\\xed\\xa0\\x80"); // a surrogate
    expect(showName(Buffer.from("c0af", "hex"))).toBe("\\xc0\\xaf"); // an overlong slash
    expect(showName(Buffer.from("f4908080", "hex"))).toBe("\\xf4\\x90\\x80\\x80"); // above U+10FFFF
  });
});
