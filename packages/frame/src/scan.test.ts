import { describe, expect, it } from "vitest";
import { scanText } from "./scan";

describe("scanText (the lexical pass)", () => {
  it("counts keys, not string values", () => {
    expect(scanText('{"a":"b","c" : ["d", "e"],"f"\n:{}}').keys).toBe(3);
    expect(scanText('{"a"\r:1,"b"\t:2,"c"\r\n\t :3}').keys).toBe(3);
  });

  it("finds the first lone surrogate escape and skips valid pairs", () => {
    expect(scanText('"\\ud83d\\ude00"').loneSurrogateAt).toBe(-1);
    expect(scanText('"ab\\ud83d"').loneSurrogateAt).toBe(3);
    expect(scanText('"\\\\ud800"').loneSurrogateAt).toBe(-1);
    expect(scanText('"\\ud800\\ud800\\udc00"').loneSurrogateAt).toBe(1);
  });

  it("pairs a high surrogate only with a \\u escape that follows at once and holds a low one", () => {
    // Valid JSON each: the high half is lone, whatever "dc00" text comes after it.
    expect(scanText('"\\ud800xudc00"').loneSurrogateAt).toBe(1);
    expect(scanText('"\\ud800\\ndc00"').loneSurrogateAt).toBe(1);
    expect(scanText('"\\ud800\\ue000"').loneSurrogateAt).toBe(1);
    // A low half is never the first of a pair, and neither is a unit past the surrogates.
    expect(scanText('"\\udc00\\udc00"').loneSurrogateAt).toBe(1);
    expect(scanText('"\\ue000\\udc00"').loneSurrogateAt).toBe(7);
  });

  it("pairs the bounds of both halves", () => {
    for (const pair of ["\\ud800\\udc00", "\\udbff\\udfff"]) {
      expect(scanText(`"${pair}"`).loneSurrogateAt, pair).toBe(-1);
    }
  });

  it("reports the first of several lone surrogates, high or low", () => {
    expect(scanText('"\\ud800 \\ud801"').loneSurrogateAt).toBe(1);
    expect(scanText('"\\udc00 \\udc01"').loneSurrogateAt).toBe(1);
  });

  it("reads only \\u escapes as code units", () => {
    expect(scanText('"\\nd800"').loneSurrogateAt).toBe(-1);
  });

  it("reports depth past 128 at the offending bracket, ignoring brackets in strings", () => {
    expect(scanText("[".repeat(129)).tooDeepAt).toBe(128);
    expect(scanText(`["${"[".repeat(300)}"]`).tooDeepAt).toBe(-1);
    expect(scanText(`"\\"${"[".repeat(300)}`).tooDeepAt).toBe(-1);
    expect(scanText(`"\\\\"${"[".repeat(129)}`).tooDeepAt).toBe(132);
  });

  it("lets a backslash outside a string hide the next character too, like the Python rule", () => {
    expect(scanText(`\\${"[".repeat(129)}`).tooDeepAt).toBe(-1);
    expect(scanText(`\\${"[".repeat(130)}`).tooDeepAt).toBe(130);
  });

  it("goes on after an empty string at the very start", () => {
    expect(scanText(`""${"[".repeat(129)}`).tooDeepAt).toBe(130);
  });

  it("lets depth go negative, exactly like the Python rule", () => {
    expect(scanText(`]]${"[".repeat(130)}`).tooDeepAt).toBe(-1);
    expect(scanText(`]]${"[".repeat(131)}`).tooDeepAt).toBe(132);
  });

  it("classifies number literals: integer vs float, overflow vs underflow", () => {
    expect(scanText("[1e400]").nonFinite).toBe("1e400");
    expect(scanText("[1e-400]").nonFinite).toBeUndefined();
    expect(scanText("[1e400, 2e400]").nonFinite).toBe("1e400");
    expect(scanText("[9007199254740992, -9007199254740993]").unsafeInteger).toBe("9007199254740992");
    expect(scanText("[9007199254740992.0]").unsafeInteger).toBeUndefined();
    expect(scanText("[-9007199254740992]").unsafeInteger).toBe("-9007199254740992");
    expect(scanText("[-9007199254740991]").unsafeInteger).toBeUndefined();
    expect(scanText('["1e400", "9007199254740992"]')).toMatchObject({ nonFinite: undefined, unsafeInteger: undefined });
  });

  it("is quadratic-free on a long string full of escapes", () => {
    const body = `"${"\\n".repeat(200_000)}x"`;
    const scan = scanText(body);
    expect(scan).toMatchObject({ tooDeepAt: -1, keys: 0, loneSurrogateAt: -1 });
  });
});

describe("scanText reads \\u escapes digit by digit", () => {
  it("finds lone surrogates spelled with every kind of hex digit, in either case", () => {
    for (const escape of ["\\ud809", "\\uD809", "\\udaff", "\\uDAFF", "\\udbfa", "\\uDBFA", "\\udc00", "\\uDFFF", "\\ude9a"]) {
      expect(scanText(`["x","${escape}"]`).loneSurrogateAt, escape).toBe(6);
    }
  });

  it("accepts pairs spelled with every kind of hex digit, in either case", () => {
    for (const pair of ["\\ud809\\udc09", "\\uD809\\uDC09", "\\udaff\\udfff", "\\uDAFF\\uDFFF", "\\udbfa\\udcaf", "\\uDBFA\\uDCAF"]) {
      expect(scanText(`["x","${pair}"]`).loneSurrogateAt, pair).toBe(-1);
    }
    expect(scanText('["\\ud7ff","\\ue000","\\u0041"]').loneSurrogateAt).toBe(-1);
  });

  it("reads an escape whose four digits are not all hex as no surrogate (only invalid JSON has one)", () => {
    // Had the non-hex unit been read as 0, "\\ud80z" would be the high surrogate d800.
    expect(scanText('"\\ud80z"').loneSurrogateAt).toBe(-1);
    // ...and "\\udc0z" would be a low surrogate completing the pair before it.
    expect(scanText('"\\ud800\\udc0z"').loneSurrogateAt).toBe(1);
  });

  it("reads no surrogate from characters just past the hex digit ranges", () => {
    // Read as digits (":" as 3, "G" or "g" as 16 or more) "d8?0" would reach d830..db00, high surrogates.
    for (const text of ['"\\ud8:0"', '"\\ud8G0"', '"\\ud8g0"', '"\\ud8@0"', '"\\ud8`0"']) {
      expect(scanText(text).loneSurrogateAt, text).toBe(-1);
    }
  });
});
