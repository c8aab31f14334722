// @klbr/driver: model turns. A request is a pure function of durable records (pinned header,
// frontier block, framed inputs, replies as received, framed results, header observations); replies
// are parsed into cells; the route call goes over the maintained openai and Anthropic clients.

// Routes (C10)
/** routes.json: parse and check a file or one route, find one, read its key from the environment. */
export { findRoute, parseRoute, parseRoutes, PRICE_KEYS, RESERVED_OPTIONS, routeKey } from "./routes.js";
/** A route, the file, and their parts. */
export type { CellsMode, Route, RouteApi, RoutePrices, RoutesFile } from "./routes.js";

// Records and assembly
/** The transcript records a request is assembled from. */
export type { AssemblyInput, CellResult, FrontierRef, ModelReply, ResultDisplay, ResultImage, ToolCall, TranscriptRecord } from "./records.js";
/** The neutral message form, and the images a result's message carries (C20). */
export type { ImagePart, Message } from "./messages.js";
/** Records to neutral messages, one record at a time or a whole request. */
export { assembleMessages, renderRecord } from "./assemble.js";
/** The frames of results, refusals, the frontier block and observations. */
export { cellImages, renderCellResult, renderFrontier, renderRefusal, renderRevision, renderTurnEnd } from "./render.js";
/** Neutral messages to a route's request body (chat, responses, anthropic), images as each API's image parts. */
export { anthropicMessages, bodyMessages, buildRequestBody, chatMessages, DEFAULT_ANTHROPIC_MAX_TOKENS, PYTHON_TOOL, responsesInput } from "./wire.js";
/** A request body, and how messages are written. */
export type { RequestBody, WireOptions } from "./wire.js";
/** Digests, serialization and shared-prefix measures. */
export { bodyDigest, prefixView, serializeBody, serializeMessages, sharedPrefixBytes } from "./prefix.js";

// Replies
/** The cells a reply carries, or why a call is refused. */
export { cellsOf, MAX_CELL_SOURCE_BYTES } from "./cells.js";
/** A cell to run or a refusal. */
export type { CellRequest } from "./cells.js";
/** One streamed call over the route's client, with usage and retries. */
export { callRoute } from "./call.js";
/** The call's options and result. */
export type { RouteCallOptions, RouteCallResult } from "./call.js";

// Folds (C12)
/** Budget folds: the estimate, the trigger and the plan. */
export { estimateTokens, FOLD_TARGET, FOLD_TRIGGER, needsBudgetFold, planBudgetFold, planBudgetFoldAsync } from "./fold.js";
/** The frontier block from section providers. */
export { composeFrontierBlock } from "./frontier.js";
/** One section of a frontier block. */
export type { FrontierSection } from "./frontier.js";

// Errors
/** The package's error class and a cross-copy type guard. */
export { DriverError, isDriverError } from "./errors.js";
/** Stable error codes of @klbr/driver. */
export type { DriverErrorCode } from "./errors.js";

// Incremental assembly
/** The same bytes as the pure assembly, each record rendered once. */
export { RequestAssembler } from "./assembler.js";
/** An assembled body. */
export type { AssembledBody } from "./assembler.js";
