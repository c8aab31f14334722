import { describe, expect, it } from "vitest";
import { formatBytes, frameImage, frameOmitted, shortDigest } from "./image.js";

const digest = `sha256:${"ab12".repeat(16)}`;

describe("frameImage (C20's image line)", () => {
  it("is the mime, the size in pixels, the bytes and the digest's first 12 hex digits", () => {
    expect(frameImage({ mime: "image/png", width: 640, height: 480, bytes: 23 * 1024 + 700, digest })).toBe("[image/png 640x480 · 23 KiB · sha256:ab12ab12ab12]");
  });
  it("leaves the size out when the header did not say it", () => {
    expect(frameImage({ mime: "image/jpeg", width: null, height: 480, bytes: 10, digest })).toBe("[image/jpeg · 10 B · sha256:ab12ab12ab12]");
  });
});

describe("formatBytes", () => {
  it.each([
    [0, "0 B"],
    [1023, "1023 B"],
    [1024, "1 KiB"],
    [1024 * 1024 - 1, "1023 KiB"],
    [1024 * 1024, "1.0 MiB"],
    [Math.floor(1.49 * 1024 * 1024), "1.4 MiB"],
    [5 * 1024 * 1024 + 1, "5.0 MiB"],
  ])("%d bytes is %s (rounded down)", (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });
});

describe("shortDigest", () => {
  it("keeps the prefix and 12 hex digits, with or without sha256:", () => {
    expect(shortDigest(digest)).toBe("sha256:ab12ab12ab12");
    expect(shortDigest("ab12".repeat(16))).toBe("sha256:ab12ab12ab12");
  });
});

describe("frameOmitted", () => {
  it("says a representation was left out, or how much text/plain was cut", () => {
    expect(frameOmitted("image/png", 5 * 1024 * 1024)).toBe("[image/png not shown: 5.0 MiB is past the 1 MiB a display carries]");
    expect(frameOmitted("text/plain", 2048)).toBe("[2 KiB of text/plain cut: a display carries at most 1 MiB]");
  });
});
