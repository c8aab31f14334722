/** The envelope `version` every v1 frame carries. */
export const PROTOCOL_VERSION = 1;
/** Longest identifier (C2), in ASCII characters. */
export const MAX_IDENTIFIER_LENGTH = 128;
/** Longest `hello.token`, in UTF-8 bytes. */
export const MAX_TOKEN_BYTES = 256;
/** Longest `hello.runtime_version` (the worker package's version), in UTF-8 bytes. */
export const MAX_RUNTIME_VERSION_BYTES = 64;
/** Longest `execute.code`, in UTF-8 bytes. */
export const MAX_CELL_SOURCE_BYTES = 262_144;
/** Most output records one completed cell may carry. */
export const MAX_OUTPUT_RECORDS = 256;
/** Most output text one completed cell may carry, in UTF-8 bytes over all records. */
export const MAX_OUTPUT_TEXT_BYTES = 65_536;
/** `output` (C16) `text` is 1..this many UTF-8 bytes. */
export const MAX_LIVE_OUTPUT_TEXT_BYTES = 16_384;
/** Most `display` messages (C20) one cell may send; more are counted in its `displays_dropped`. */
export const MAX_DISPLAYS_PER_CELL = 32;
/** Longest MIME type a display bundle may use as a key (RFC 6838: 127 + "/" + 127). */
export const MAX_MIME_TYPE_LENGTH = 255;
/** The display bundle types that are bytes, sent as canonical base64 (C20). */
export const BINARY_DISPLAY_MIMES = ["image/jpeg", "image/png"] as const;
/** The metadata key naming what a display left out to fit one frame: `{mime: bytes}` (C20). */
export const DISPLAY_OMITTED_KEY = "klbr/omitted";
/** Completed operation ids an {@link OutputSequence} remembers to name an `output` after `completed`. */
export const OUTPUT_SEQUENCE_MEMORY = 256;
/** Longest cell traceback or worker failure text, in UTF-8 bytes. */
export const MAX_ERROR_BYTES = 65_536;
/** Longest `local.send` / `delivery.review` message text, in UTF-8 bytes. */
export const MAX_SEND_TEXT_BYTES = 65_536;
/** `maintenance.originate` `purpose` and `reason` are 1..this many UTF-8 bytes (C11). */
export const MAX_WORK_ITEM_TEXT_BYTES = 4096;
/** `orientation.stage` `text` is 1..this many UTF-8 bytes (C11). */
export const MAX_CANDIDATE_TEXT_BYTES = 65_536;
/** `peer.send` `content` is 1..this many UTF-8 bytes (C13). */
export const MAX_PEER_CONTENT_BYTES = 65_536;
/** Largest `peer.result` `wait_ms` (C13); the smallest is 0. */
export const MAX_PEER_WAIT_MS = 600_000;
/** `maintenance.assess` outcomes (C11): `deferred` keeps the item open, the others close it. */
export const WORK_ITEM_OUTCOMES = ["no-change", "changed", "abandoned", "deferred"] as const;
/** Upper bound of `runtime.wait` and hook `defer` seconds; the lower bound 0 is exclusive. */
export const MAX_WAIT_SECONDS = 600;
/** Most host requests one foreground cell may make (enforced by the host, not the schema). */
export const MAX_REQUESTS_PER_CELL = 128;
/** Most refs one `evidence.resolve` may name. */
export const MAX_EVIDENCE_REFS = 64;
/** Largest `workspace.run` `timeout_ms`. */
export const MAX_RUN_TIMEOUT_MS = 3_600_000;
/** Largest `workspace.run` `max_output_bytes`. */
export const MAX_RUN_OUTPUT_BYTES = 750_000;
/** Largest hook `wake` priority (the smallest is 0). */
export const MAX_PRIORITY = 100;
/** The decision slots a hooks worker serves, in spec order. */
export const HOOK_SLOTS = ["attention.plan", "delivery.review"] as const;
