import { MAX_FRAME_BYTES } from "./constants";
import { FrameError } from "./errors";

/** Throws FRAME_EMPTY or FRAME_TOO_LARGE unless 1 <= length <= MAX_FRAME_BYTES. */
export function checkFrameLength(length: number): void {
  if (length === 0) throw new FrameError("FRAME_EMPTY", "frame length 0: a payload must hold at least 1 byte");
  if (length > MAX_FRAME_BYTES) {
    throw new FrameError("FRAME_TOO_LARGE", `frame length ${length} exceeds ${MAX_FRAME_BYTES} bytes`);
  }
}
