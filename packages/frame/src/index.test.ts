import { expect, it } from "vitest";
import * as frame from "./index";

it("exports exactly the documented surface", () => {
  expect(Object.keys(frame).sort()).toEqual([
    "FRAME_ERROR_CODES",
    "FrameDecoder",
    "FrameError",
    "HEADER_BYTES",
    "MAX_DEPTH",
    "MAX_FRAME_BYTES",
    "MAX_SAFE_INTEGER",
    "decodePayload",
    "encodeFrame",
    "encodePayload",
    "isFrameError",
  ]);
  expect(frame.MAX_FRAME_BYTES).toBe(1_048_576);
  expect(frame.MAX_DEPTH).toBe(128);
  expect(frame.MAX_SAFE_INTEGER).toBe(Number.MAX_SAFE_INTEGER);
});
