import { describe, expect, it } from "vitest";
import { HEADER_ERROR_CODES, HeaderError, isHeaderError } from "./errors.js";
import { checkSources } from "./sources.js";

describe("HeaderError", () => {
  it("carries a stable code and a message naming the offending value", () => {
    let caught: unknown;
    try {
      checkSources([{ name: "dup", text: "" }, { name: "dup", text: "" }]);
    } catch (error) {
      caught = error;
    }
    expect(isHeaderError(caught)).toBe(true);
    expect((caught as HeaderError).code).toBe("HEADER_INVALID_SOURCES");
    expect((caught as HeaderError).message).toContain('"dup"');
  });

  it("is recognised by brand across copies, and only with a known code", () => {
    const foreign = Object.assign(new Error("x"), { name: "HeaderError", code: "HEADER_NO_PIN" });
    expect(isHeaderError(foreign)).toBe(true);
    expect(isHeaderError(Object.assign(new Error("x"), { name: "HeaderError", code: "NOPE" }))).toBe(false);
    expect(isHeaderError(new Error("x"))).toBe(false);
    expect(isHeaderError({ name: "HeaderError", code: "HEADER_NO_PIN" })).toBe(false);
  });

  it("codes are unique and prefixed", () => {
    expect(new Set(HEADER_ERROR_CODES).size).toBe(HEADER_ERROR_CODES.length);
    for (const code of HEADER_ERROR_CODES) expect(code).toMatch(/^HEADER_[A-Z_]+$/);
  });
});
