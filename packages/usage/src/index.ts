// @klbr/usage: provider usage shapes to one record; absent stays absent, nothing is derived.

// Reading usage
/** Read a parsed provider response into one UsageRecord. */
export { readUsage } from "./read.js";
/** Options of the readers: the declared provider shape. */
export type { ReadUsageOptions } from "./read.js";
/** Read parsed stream chunks, whole or incrementally. */
export { readUsageStream, createUsageStreamReader } from "./stream.js";
/** The incremental stream reader. */
export type { UsageStreamReader } from "./stream.js";

// The record
/** Shapes, count fields and flags, as ordered constants. */
export { USAGE_SHAPES, USAGE_COUNT_FIELDS, USAGE_FLAGS } from "./record.js";
/** The record and its parts. */
export type { UsageRecord, UsageCounts, UsageCountField, UsageFlag, UsageShape } from "./record.js";

// Route options
/** Strip cache options a route has not declared it accepts. */
export { stripCacheOptions, CACHE_OPTION_KEYS } from "./options.js";
/** The route profile's cache declaration and the stripped options type. */
export type { CacheOptionKey, RouteCacheProfile, StrippedOptions } from "./options.js";

// Errors
/** The package's error class and a cross-copy type guard. */
export { UsageError, isUsageError } from "./errors.js";
/** Stable error codes of @klbr/usage. */
export type { UsageErrorCode } from "./errors.js";

// Cost (C23)
/** What a request cost at a route's prices, with the formula; the tokens of each kind it was billed for. */
export { costOf, billedTokens, PRICE_KINDS } from "./cost.js";
/** A route's prices and the priced terms. */
export type { CostTerm, PriceKind, UsageCost, UsagePrices } from "./cost.js";
