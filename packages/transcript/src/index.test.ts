import { describe, expect, it } from "vitest";
import * as api from "./index.js";

describe("public API", () => {
  it("exports exactly these names", () => {
    expect(Object.keys(api).sort()).toEqual(
      [
        "FRAME_SEPARATOR",
        "IMAGE_DIGEST_DIGITS",
        "formatBytes",
        "frameImage",
        "frameOmitted",
        "shortDigest",
        "MAX_STAMP_MS",
        "TIME_UNKNOWN",
        "TranscriptError",
        "formatDuration",
        "formatStamp",
        "frameInput",
        "frameInputLine",
        "frameResult",
        "inputLabel",
        "isTranscriptError",
        "isUsableTime",
        "stampOrUnknown",
      ].sort(),
    );
  });

  it("brands its errors with a stable code", () => {
    let caught: unknown;
    try {
      api.formatDuration(-5);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(api.TranscriptError);
    expect(api.isTranscriptError(caught)).toBe(true);
    expect(api.isTranscriptError(new Error("x"))).toBe(false);
    expect((caught as api.TranscriptError).code).toBe("TRANSCRIPT_INVALID_DURATION");
    expect((caught as Error).message).toContain("-5");
  });
});
