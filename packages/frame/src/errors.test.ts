import { describe, expect, it } from "vitest";
import { FRAME_ERROR_CODES, FrameError, isFrameError } from "./errors";

describe("FrameError", () => {
  it("carries its code, name, message, cause and an empty values list", () => {
    const cause = new Error("inner");
    const error = new FrameError("FRAME_TOO_LARGE", "frame length 5 exceeds 4 bytes", { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe("FRAME_TOO_LARGE");
    expect(error.name).toBe("FrameError");
    expect(error.message).toBe("frame length 5 exceeds 4 bytes");
    expect(error.cause).toBe(cause);
    expect(error.values).toEqual([]);
  });

  it("is recognised by isFrameError, also from another installed copy (the brand, not the class)", () => {
    expect(isFrameError(new FrameError("FRAME_EMPTY", "x"))).toBe(true);
    const foreign = Object.assign(new Error("x"), { code: "FRAME_EMPTY" });
    Object.defineProperty(foreign, Symbol.for("@klbr/frame/FrameError"), { value: true });
    expect(isFrameError(foreign)).toBe(true);
  });

  it("rejects look-alikes without the brand", () => {
    expect(isFrameError(Object.assign(new Error("x"), { code: "FRAME_EMPTY" }))).toBe(false);
    expect(isFrameError({ code: "FRAME_EMPTY" })).toBe(false);
    expect(isFrameError(null)).toBe(false);
    expect(isFrameError("FRAME_EMPTY")).toBe(false);
  });

  it("rejects a function even when it carries the brand: a FrameError is an object", () => {
    const branded = Object.defineProperty(() => undefined, Symbol.for("@klbr/frame/FrameError"), { value: true });
    expect(isFrameError(branded)).toBe(false);
  });

  it("has exactly the codes docs/wire.md lists", () => {
    expect([...FRAME_ERROR_CODES].sort()).toEqual(
      [
        "FRAME_EMPTY", "FRAME_TOO_LARGE", "FRAME_TRUNCATED", "FRAME_INVALID_UTF8", "FRAME_BOM", "FRAME_INVALID_JSON",
        "FRAME_DUPLICATE_KEY", "FRAME_LONE_SURROGATE", "FRAME_NON_FINITE", "FRAME_UNSAFE_INTEGER", "FRAME_TOO_DEEP",
        "FRAME_UNENCODABLE", "FRAME_POISONED",
      ].sort(),
    );
  });
});
