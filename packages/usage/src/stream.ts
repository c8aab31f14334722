import { isObject, type JsonObject } from "./count.js";
import { UsageError, describeValue } from "./errors.js";
import { buildRecord } from "./build.js";
import {
  checkProvider,
  checkUsageMatches,
  defaultShape,
  extract,
  familyOf,
  shapeOfUsage,
  usageObject,
  type Family,
} from "./family.js";
import { USAGE_COUNT_FIELDS, type UsageCounts, type UsageFlag, type UsageRecord, type UsageShape } from "./record.js";
import type { ReadUsageOptions } from "./read.js";

const ANTHROPIC_EVENTS = new Set([
  // Stryker disable next-line StringLiteral: equivalent, classify() handles message_start before it looks in this set
  "message_start",
  "message_delta",
  "message_stop",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "ping",
]);

interface Classified {
  family?: Family;
  usage?: unknown;
  path: string;
}

/** Which family a chunk belongs to and where its usage (if any) sits. */
function classify(chunk: JsonObject, index: number): Classified {
  const at = `chunk[${index}]`;
  const type = chunk.type;
  if (typeof type === "string") {
    if (type.startsWith("response.")) {
      const response = chunk.response;
      return { family: "responses", usage: isObject(response) ? response.usage : undefined, path: `${at}.response.usage` };
    }
    if (type === "message_start") {
      const message = chunk.message;
      return { family: "anthropic", usage: isObject(message) ? message.usage : undefined, path: `${at}.message.usage` };
    }
    if (ANTHROPIC_EVENTS.has(type)) return { family: "anthropic", usage: chunk.usage, path: `${at}.usage` };
  }
  if (Object.hasOwn(chunk, "usageMetadata") || Object.hasOwn(chunk, "candidates")) {
    return { family: "gemini", usage: chunk.usageMetadata, path: `${at}.usageMetadata` };
  }
  if (Object.hasOwn(chunk, "choices") || Object.hasOwn(chunk, "usage")) {
    return { family: "chat", usage: chunk.usage, path: `${at}.usage` };
  }
  // Anything else (an "error" event, a keep-alive) says nothing about usage or shape.
  // Stryker disable next-line ObjectLiteral: equivalent, push() returns on a chunk without a family before it reads the path
  return { path: at };
}

/** An incremental reader: push parsed chunks as they arrive, then finish() for the record. */
export interface UsageStreamReader {
  /** Reads one parsed stream chunk; throws USAGE_STREAM_FINISHED after finish(). */
  push(chunk: unknown): void;
  /** The record for everything pushed so far; the reader takes no more chunks afterwards. */
  finish(): UsageRecord;
}

/**
 * Creates an incremental stream usage reader. OpenAI chat/Responses and Gemini usage objects are
 * whole snapshots (the last one wins); Anthropic's message_start usage is merged field by field
 * with each message_delta usage (a later field wins, so the delta's output_tokens is final).
 */
export function createUsageStreamReader(options: ReadUsageOptions = {}): UsageStreamReader {
  const provider = checkProvider(options?.provider);
  let family: Family | undefined = provider && familyOf(provider);
  let refined: UsageShape | undefined;
  let counts: UsageCounts = {};
  let index = 0;
  let finished = false;
  const raw: unknown[] = [];
  const flags = new Set<UsageFlag>();

  function take(next: UsageCounts, merge: boolean): void {
    for (const field of USAGE_COUNT_FIELDS) {
      const before = counts[field];
      const after = next[field];
      if (before !== undefined && after !== undefined && after < before) flags.add("stream_counts_decreased");
    }
    counts = merge ? { ...counts, ...next } : next;
  }

  return {
    push(chunk: unknown): void {
      if (finished) throw new UsageError("USAGE_STREAM_FINISHED", `chunk[${index}] pushed after finish()`);
      if (!isObject(chunk)) {
        throw new UsageError("USAGE_INVALID_CHUNK", `chunk[${index}] must be a parsed JSON object, got ${describeValue(chunk)}`);
      }
      const seen = classify(chunk, index);
      index += 1;
      if (seen.family === undefined) return;
      if (family !== undefined && seen.family !== family) {
        const expected = provider ?? defaultShape(family);
        throw new UsageError(
          "USAGE_SHAPE_MISMATCH",
          `${seen.path} reads as ${defaultShape(seen.family)} but the stream is ${expected}`,
        );
      }
      family = seen.family;
      const usage = usageObject(seen.usage, seen.path);
      if (usage === undefined) return;
      checkUsageMatches(family, usage, seen.path);
      if (family === "chat") {
        const shape = shapeOfUsage(usage, chunk);
        // Only a chat-family label refines a chat stream: usage keys shared with another family
        // (total_tokens alone reads as Responses) must not relabel chunks read as chat.
        if (shape !== undefined && shape !== "openai_chat" && familyOf(shape) === "chat") refined = shape;
      }
      const extracted = extract(family, usage, seen.path);
      raw.push(usage);
      for (const flag of extracted.flags) flags.add(flag);
      take(extracted.counts, family === "anthropic");
    },

    finish(): UsageRecord {
      finished = true;
      const shape = provider ?? refined ?? (family === undefined ? "unknown" : defaultShape(family));
      return buildRecord(shape, raw.length === 0 ? undefined : family, counts, [...raw], flags);
    },
  };
}

/** Reads a whole sequence of parsed stream chunks into one UsageRecord. */
export function readUsageStream(chunks: Iterable<unknown>, options: ReadUsageOptions = {}): UsageRecord {
  if (chunks === null || typeof chunks !== "object" || typeof (chunks as Iterable<unknown>)[Symbol.iterator] !== "function") {
    throw new UsageError("USAGE_INVALID_CHUNK", `readUsageStream needs an iterable of chunks, got ${describeValue(chunks)}`);
  }
  const reader = createUsageStreamReader(options);
  for (const chunk of chunks) reader.push(chunk);
  return reader.finish();
}
