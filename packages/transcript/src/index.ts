// @klbr/transcript: the frames the model reads in front of inputs and tool results.

// Frames
/** Frame an input: `[stamp · label]\n` + the sender's words; see ./frame.ts. */
export { frameInput, frameInputLine, frameResult, FRAME_SEPARATOR } from "./frame.js";
/** The label of an input frame: the source, `peer request <id> from <session>` or `peer result <id> from <session>`. */
export { inputLabel } from "./label.js";

// Images (C20)
/** The image line of a displayed image (`[image/png 640x480 · 23 KiB · sha256:<first 12>]`), what a display left out, byte sizes, short digests. */
export { frameImage, frameOmitted, formatBytes, shortDigest, IMAGE_DIGEST_DIGITS } from "./image.js";
/** What an image line is derived from. */
export type { ImageFacts } from "./image.js";

// Instants and durations
/** Stamps (`YYYY-MM-DDTHH:MM:SSZ`) and the "no usable time" rule. */
export { formatStamp, isUsableTime, stampOrUnknown, MAX_STAMP_MS, TIME_UNKNOWN } from "./stamp.js";
/** C9 durations: `420ms`, `4.2s`, `3m07s`, `1h15m07s`, always rounded down. */
export { formatDuration } from "./duration.js";

// Types
/** The durable input event and the tool-result facts a frame is derived from. */
export type { InputEvent, InputPayload, PeerRequestIdentity, ResultFacts } from "./event.js";

// Errors
/** The package's error class, its codes and a cross-copy type guard. */
export { TranscriptError, isTranscriptError } from "./errors.js";
/** Stable error codes of @klbr/transcript. */
export type { TranscriptErrorCode } from "./errors.js";
