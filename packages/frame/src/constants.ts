/** Largest payload a frame may carry, in bytes (the header is not counted). */
export const MAX_FRAME_BYTES = 1_048_576;

/** Deepest nesting of arrays/objects a payload may have; the top-level container is depth 1. */
export const MAX_DEPTH = 128;

/** Size of the big-endian length header in front of every payload. */
export const HEADER_BYTES = 4;

/** Largest integer literal magnitude both languages read exactly: 2^53 - 1. */
export const MAX_SAFE_INTEGER = 9_007_199_254_740_991;
