// fixtures/display/: the C20 `display` message and the rules across messages (DisplaySequence).
// The Python suite runs the same files (python/tests/test_display_vectors.py).
import { describe, expect, it } from "vitest";
import { describeExtensionVectors } from "../test/extension-vectors.js";
import { DisplaySequence, type DisplaySequencedMessage } from "./display-sequence.js";
import { isEncodedImage, isMimeType } from "./display.js";

describeExtensionVectors<DisplaySequencedMessage>({
  dir: "display",
  sequence: (negotiated) => new DisplaySequence({ negotiated }),
  minErrors: 40,
  sequenceCodes: [
    "ENVELOPE_DISPLAY_AFTER_COMPLETED",
    "ENVELOPE_DISPLAY_DROPPED",
    "ENVELOPE_DISPLAY_NOT_NEGOTIATED",
    "ENVELOPE_DISPLAY_SEQUENCE",
    "ENVELOPE_DISPLAY_UNKNOWN_OPERATION",
    "ENVELOPE_MISSING_FIELD",
  ],
});

describe("isMimeType / isEncodedImage", () => {
  it("reads MIME types as the vectors do", () => {
    expect(isMimeType("image/png")).toBe(true);
    expect(isMimeType("application/vnd.plotly.v1+json")).toBe(true);
    expect(isMimeType("image/PNG")).toBe(false);
    expect(isMimeType(5)).toBe(false);
  });

  it("checks a 5 MiB PNG's base64 whole (every character, in one pass)", () => {
    const bytes = Buffer.alloc(5 * 1024 * 1024, 7);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes);
    const text = bytes.toString("base64");
    expect(isEncodedImage("image/png", text)).toBe(true);
    const broken = `${text.slice(0, 3_000_000)}*${text.slice(3_000_001)}`;
    expect(isEncodedImage("image/png", broken)).toBe(false);
    expect(isEncodedImage("image/gif", text)).toBe(false);
  });
});
