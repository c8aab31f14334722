import { isObject, type JsonObject } from "./count.js";
import { UsageError, describeValue } from "./errors.js";
import { buildRecord } from "./build.js";
import {
  checkProvider,
  checkUsageMatches,
  extract,
  familyOf,
  shapeOfResponse,
  shapeOfUsage,
  usageObject,
} from "./family.js";
import type { UsageRecord, UsageShape } from "./record.js";

/** The shape a response reveals: Gemini's usageMetadata, then the usage keys, then the envelope. */
function detectShape(response: JsonObject): UsageShape | undefined {
  if (isObject(response.usageMetadata)) return "gemini";
  const usage = response.usage;
  return (isObject(usage) ? shapeOfUsage(usage, response) : undefined) ?? shapeOfResponse(response);
}

/** Options of readUsage and readUsageStream. */
export interface ReadUsageOptions {
  /** The shape the route speaks; detected from the payload when absent. */
  provider?: UsageShape;
}

/**
 * Reads one provider response (parsed JSON) into a UsageRecord. Counts the route did not send
 * stay absent; a response without usage gives a record with no counts and an empty `raw`.
 */
export function readUsage(response: unknown, options: ReadUsageOptions = {}): UsageRecord {
  if (!isObject(response)) {
    throw new UsageError("USAGE_INVALID_RESPONSE", `readUsage needs a parsed JSON object, got ${describeValue(response)}`);
  }
  const provider = checkProvider(options?.provider);
  const detected = detectShape(response);
  const gemini = familyOf(provider ?? detected ?? "openai_chat") === "gemini";
  const path = gemini ? "usageMetadata" : "usage";
  const usage = usageObject(gemini ? response.usageMetadata : response.usage, path);

  if (provider !== undefined && detected !== undefined && familyOf(detected) !== familyOf(provider)) {
    throw new UsageError(
      "USAGE_SHAPE_MISMATCH",
      `provider ${provider} was declared but the response reads as ${detected}`,
    );
  }
  const shape = provider ?? detected;
  if (usage === undefined) return buildRecord(shape ?? "unknown", undefined, {}, []);
  if (shape === undefined) {
    throw new UsageError(
      "USAGE_UNKNOWN_SHAPE",
      `cannot tell which provider sent usage with keys ${describeValue(Object.keys(usage))}; pass options.provider`,
    );
  }
  const family = familyOf(shape);
  checkUsageMatches(family, usage, path);
  const { counts, flags } = extract(family, usage, path);
  return buildRecord(shape, family, counts, [usage], flags);
}
