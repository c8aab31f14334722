// @klbr/frame: 4-byte big-endian length + strict UTF-8 JSON payload (C1), in both directions.

// Encoding
export { encodeFrame, encodePayload } from "./encode";

// Decoding
export { decodePayload } from "./decode";
export { FrameDecoder } from "./decoder";

// Constants
export { HEADER_BYTES, MAX_DEPTH, MAX_FRAME_BYTES, MAX_SAFE_INTEGER } from "./constants";

// Errors
export { FrameError, isFrameError, FRAME_ERROR_CODES, type FrameErrorCode } from "./errors";
