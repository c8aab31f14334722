import { describe, expect, it } from "vitest";
import { decodePayload } from "./decode";
import { MAX_FRAME_BYTES } from "./constants";

const utf8 = (s: string) => new TextEncoder().encode(s);

function codeOf(bytes: Uint8Array): { code: string; message: string } {
  try {
    decodePayload(bytes);
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error("expected an error");
}

describe("decodePayload", () => {
  it("reads a payload that is a view into a larger buffer", () => {
    const buffer = utf8('xx[1,{"a":"b"}]yy');
    expect(decodePayload(buffer.subarray(2, buffer.length - 2))).toEqual([1, { a: "b" }]);
  });

  it("keeps JavaScript's -0 for the literal -0", () => {
    expect(Object.is(decodePayload(utf8("-0")), -0)).toBe(true);
  });

  it("checks the length itself: empty and over 1 MiB", () => {
    expect(codeOf(new Uint8Array(0)).code).toBe("FRAME_EMPTY");
    const big = codeOf(new Uint8Array(MAX_FRAME_BYTES + 1).fill(0x20));
    expect(big.code).toBe("FRAME_TOO_LARGE");
    expect(big.message).toContain("1048577");
  });

  it("names the offending value in its messages", () => {
    expect(codeOf(utf8('"ab\u00e9"').subarray(0, 4)).message).toMatch(/byte 3 \(c3\)/);
    expect(codeOf(utf8('{"id":1,"id":2}')).message).toContain('"id"');
    expect(codeOf(utf8('["\\udabc"]')).message).toContain("\\udabc");
    expect(codeOf(utf8("[2e999]")).message).toContain("2e999");
    expect(codeOf(utf8("[90071992547409930]")).message).toContain("90071992547409930");
    expect(codeOf(utf8("[1,]")).message).toMatch(/^invalid JSON: /);
    expect(codeOf(utf8("[".repeat(200))).message).toContain("128");
  });

  it("shortens a huge offending literal in the message", () => {
    const { code, message } = codeOf(utf8("9".repeat(10_000)));
    expect(code).toBe("FRAME_UNSAFE_INTEGER");
    expect(message.length).toBeLessThan(200);
    expect(message).toContain("10000 characters");
  });

  it("finds the duplicate among many distinct keys at several depths", () => {
    const inner = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    const body = JSON.stringify({ a: inner, b: [inner, inner] }).replace('"k7":7', '"k7":7,"k7":8');
    const error = codeOf(utf8(body));
    expect(error.code).toBe("FRAME_DUPLICATE_KEY");
    expect(error.message).toContain('"k7"');
  });

  it("does not count a parsed object's inherited enumerable properties", () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.polluted = 1;
    try {
      expect(decodePayload(utf8('{"a":1,"b":{"c":2}}'))).toEqual({ a: 1, b: { c: 2 } });
      expect(codeOf(utf8('{"a":1,"b":{"c":2,"c":3}}')).code).toBe("FRAME_DUPLICATE_KEY");
      expect(codeOf(utf8('{"a":[12345678901234567]}')).code).toBe("FRAME_UNSAFE_INTEGER");
    } finally {
      delete proto.polluted;
    }
  });
});

describe("decodePayload messages and causes", () => {
  it("words the length errors exactly", () => {
    expect(codeOf(new Uint8Array(0))).toMatchObject({ code: "FRAME_EMPTY", message: "frame length 0: a payload must hold at least 1 byte" });
    expect(codeOf(new Uint8Array(MAX_FRAME_BYTES + 1).fill(0x20))).toMatchObject({
      code: "FRAME_TOO_LARGE",
      message: "frame length 1048577 exceeds 1048576 bytes",
    });
  });

  it("says a BOM is a BOM", () => {
    const error = codeOf(Uint8Array.of(0xef, 0xbb, 0xbf, 0x31));
    expect(error).toMatchObject({ code: "FRAME_BOM", message: "payload starts with a byte-order mark (ef bb bf)" });
  });

  it("keeps JSON.parse's error as the cause of FRAME_INVALID_JSON", () => {
    const error = codeOf(utf8("[1,]")) as unknown as Error;
    expect(error.cause).toBeInstanceOf(SyntaxError);
    expect(error.message).toBe(`invalid JSON: ${(error.cause as Error).message}`);
  });

  it("names the character where valid JSON first nests past 128", () => {
    const text = `[${"[".repeat(128)}${"]".repeat(128)}]`;
    expect(codeOf(utf8(text))).toMatchObject({ code: "FRAME_TOO_DEEP", message: "nesting deeper than 128 at character 128" });
  });

  it("quotes exactly the lone surrogate escape and its offset", () => {
    expect(codeOf(utf8('["ab","\\udabcx"]')).message).toBe("lone surrogate escape \\udabc at character 7");
  });

  it("shows an offending literal of 40 characters whole, and one of 41 shortened", () => {
    const forty = `1${"0".repeat(39)}`;
    expect(codeOf(utf8(`[${forty}]`)).message).toBe(`integer literal ${forty} is beyond ±(2^53 - 1)`);
    const fortyOne = `1${"0".repeat(40)}`;
    expect(codeOf(utf8(`[${fortyOne}]`)).message).toBe(`integer literal ${fortyOne.slice(0, 40)}... (41 characters) is beyond ±(2^53 - 1)`);
  });
});
