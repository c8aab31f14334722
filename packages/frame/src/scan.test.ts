import { describe, expect, it } from "vitest";
import { scanText } from "./scan";

describe("scanText (the lexical pass)", () => {
  it("counts keys, not string values", () => {
    expect(scanText('{"a":"b","c" : ["d", "e"],"f"\n:{}}').keys).toBe(3);
  });

  it("finds the first lone surrogate escape and skips valid pairs", () => {
    expect(scanText('"\\ud83d\\ude00"').loneSurrogateAt).toBe(-1);
    expect(scanText('"ab\\ud83d"').loneSurrogateAt).toBe(3);
    expect(scanText('"\\\\ud800"').loneSurrogateAt).toBe(-1);
    expect(scanText('"\\ud800\\ud800\\udc00"').loneSurrogateAt).toBe(1);
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

  it("lets depth go negative, exactly like the Python rule", () => {
    expect(scanText(`]]${"[".repeat(130)}`).tooDeepAt).toBe(-1);
    expect(scanText(`]]${"[".repeat(131)}`).tooDeepAt).toBe(132);
  });

  it("classifies number literals: integer vs float, overflow vs underflow", () => {
    expect(scanText("[1e400]").nonFinite).toBe("1e400");
    expect(scanText("[1e-400]").nonFinite).toBeUndefined();
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
});
