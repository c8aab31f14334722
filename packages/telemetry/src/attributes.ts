// Attribute names. Everything the OpenTelemetry semantic conventions name comes from the
// maintained package (the `incubating` entry holds gen_ai.*); only what klbr knows and no
// convention names is ours, under the `klbr.` namespace as the conventions ask of vendors.
export {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_SERVICE_NAME,
} from "@opentelemetry/semantic-conventions";
export {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,
  ATTR_PROCESS_COMMAND,
  ATTR_PROCESS_COMMAND_ARGS,
  ATTR_PROCESS_EXIT_CODE,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_PROVIDER_NAME_VALUE_ANTHROPIC,
  GEN_AI_PROVIDER_NAME_VALUE_OPENAI,
} from "@opentelemetry/semantic-conventions/incubating";

/** The turn's id in the log (`turn_...`). */
export const ATTR_KLBR_TURN_ID = "klbr.turn.id";
/** Why the turn ended: `yielded`, `model_ended_turn`, `max_cells_per_turn`, `route_failed`, ... */
export const ATTR_KLBR_TURN_END_REASON = "klbr.turn.end_reason";
/** The route the request was sent on (routes.json name). */
export const ATTR_KLBR_ROUTE = "klbr.route";
/** The model request's row id (`mr_...`). */
export const ATTR_KLBR_MODEL_REQUEST_ID = "klbr.model_request.id";
/** The instruction header record the request ran under. */
export const ATTR_KLBR_HEADER_RECORD_ID = "klbr.header.record_id";
/** Bytes of the request body, and bytes it shared with the previous request's body (C10 prefix stability). */
export const ATTR_KLBR_REQUEST_BODY_BYTES = "klbr.request.body_bytes";
/** Bytes of the body shared with the previous request's body. */
export const ATTR_KLBR_REQUEST_SHARED_PREFIX_BYTES = "klbr.request.shared_prefix_bytes";
/** The execution's id in the log (`ex_...`). */
export const ATTR_KLBR_EXECUTION_ID = "klbr.execution.id";
/** The cell's terminal status: ok, error, yielded, interrupted, failed. */
export const ATTR_KLBR_CELL_STATUS = "klbr.cell.status";
/** The rung of the interrupt ladder that ended the cell (absent when it ended by itself). */
export const ATTR_KLBR_CELL_ENDED_BY = "klbr.cell.ended_by";
/** Output bytes the worker dropped beyond the cap. */
export const ATTR_KLBR_CELL_TRUNCATED_BYTES = "klbr.cell.truncated_bytes";
/** A host request's id within its cell, and its reply status (`ok` or the error code). */
export const ATTR_KLBR_HOST_REQUEST_ID = "klbr.host_request.id";
/** A host request's reply: `ok`, or the reply's error code. */
export const ATTR_KLBR_HOST_REQUEST_STATUS = "klbr.host_request.status";
/** Milliseconds from a host request to its reply. */
export const ATTR_KLBR_HOST_REQUEST_DURATION_MS = "klbr.host_request.duration_ms";
/** The peer a peer request went to, and the request's id. */
export const ATTR_KLBR_PEER_ID = "klbr.peer.id";
/** The request id of a peer request (unique per opener session). */
export const ATTR_KLBR_PEER_REQUEST_ID = "klbr.peer.request_id";
