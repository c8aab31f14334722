// @klbr/envelope: the public surface, listed by name. Nothing else is exported.

// Parsing (the one entry point and its companions)
export { parseEnvelope, safeParseEnvelope, parseHostRequest, parseHookInput, parseHookResult, parseHello, makeEnvelope, parseReplyValue } from "./parse.js";
export type { ExpectedIdentity } from "./envelope.js";

// Connection state of C16 live output
export { OutputSequence } from "./output-sequence.js";
export type { OutputSequenceOptions, SequencedMessage } from "./output-sequence.js";

// C20 rich display: the bundle's predicates and the connection state
export { DisplaySequence } from "./display-sequence.js";
export type { DisplaySequenceOptions, DisplaySequencedMessage } from "./display-sequence.js";
export { isMimeType, isEncodedImage, DisplayMessageSchema } from "./display.js";

// Errors
export { EnvelopeError, isEnvelopeError, ENVELOPE_ERROR_CODES } from "./error.js";
export type { EnvelopeErrorCode } from "./error.js";

// Predicates and helpers
export { isIdentifier, isDigest, isErrorCode } from "./identifier.js";
export { utf8Length } from "./text.js";
export { canonicalMethod, HOST_REQUEST_METHODS, METHOD_ALIASES } from "./host-request.js";

// Limits and vocabularies
export {
  PROTOCOL_VERSION,
  MAX_IDENTIFIER_LENGTH,
  MAX_TOKEN_BYTES,
  MAX_RUNTIME_VERSION_BYTES,
  MAX_CELL_SOURCE_BYTES,
  MAX_OUTPUT_RECORDS,
  MAX_OUTPUT_TEXT_BYTES,
  MAX_ERROR_BYTES,
  MAX_LIVE_OUTPUT_TEXT_BYTES,
  OUTPUT_SEQUENCE_MEMORY,
  MAX_SEND_TEXT_BYTES,
  MAX_WORK_ITEM_TEXT_BYTES,
  MAX_CANDIDATE_TEXT_BYTES,
  MAX_PEER_CONTENT_BYTES,
  MAX_PEER_WAIT_MS,
  WORK_ITEM_OUTCOMES,
  MAX_WAIT_SECONDS,
  MAX_REQUESTS_PER_CELL,
  MAX_EVIDENCE_REFS,
  MAX_RUN_TIMEOUT_MS,
  MAX_RUN_OUTPUT_BYTES,
  MAX_PRIORITY,
  HOOK_SLOTS,
  MAX_DISPLAYS_PER_CELL,
  MAX_MIME_TYPE_LENGTH,
  BINARY_DISPLAY_MIMES,
  DISPLAY_OMITTED_KEY,
} from "./limits.js";
export { ATTENTION_SOURCES } from "./hook.js";
export { WORKER_ROLES, CELL_STATUSES, OUTPUT_STREAMS, LIVE_OUTPUT_STREAMS } from "./message.js";

// Schemas (valibot; for composition. Use the parse functions above for coded errors.)
export { EnvelopeSchema, envelopeSchema, VersionSchema } from "./envelope.js";
export {
  MessageSchema,
  HelloMessageSchema,
  ExecuteMessageSchema,
  InvokeMessageSchema,
  HostRequestMessageSchema,
  HostReplyMessageSchema,
  HostReplySchema,
  CompletedMessageSchema,
  CompletedResultSchema,
  CellResultSchema,
  HookResultSchema,
  FailedResultSchema,
  OutputRecordSchema,
  OutputMessageSchema,
  InterruptMessageSchema,
  ShutdownMessageSchema,
} from "./message.js";
export { HostRequestSchema, ScopeSchema } from "./host-request.js";
export { REPLY_VALUE_SCHEMAS, type ReplyMethod } from "./reply.js";
export {
  HookSlotSchema,
  AttentionInputSchema,
  AttentionResultSchema,
  DeliveryInputSchema,
  DeliveryResultSchema,
  AnyHookResultSchema,
} from "./hook.js";

// Types (inferred from the schemas)
export type {
  Envelope,
  Message,
  MessageKind,
  HelloMessage,
  ExecuteMessage,
  InvokeMessage,
  HostRequestMessage,
  HostReplyMessage,
  CompletedMessage,
  OutputMessage,
  DisplayMessage,
  InterruptMessage,
  ShutdownMessage,
  CompletedResult,
  CellResult,
  HookResult,
  FailedResult,
  OutputRecord,
  HostRequest,
  HostRequestMethod,
  HostRequestOf,
  HostReply,
  HookSlot,
  WorkerRole,
  AttentionInput,
  AttentionResult,
  DeliveryInput,
  DeliveryResult,
  HookInputOf,
  HookResultOf,
} from "./types.js";
