import { Buffer } from "node:buffer";
import { MAX_DEPTH } from "./constants";
import { countParsedKeys, findDuplicateKey } from "./duplicates";
import { FrameError } from "./errors";
import { inspectParsed, keysAccountedFor } from "./inspect";
import { keyBound } from "./keys";
import { checkFrameLength } from "./length";
import { scanText } from "./scan";
import { decodeUtf8 } from "./utf8";

// What a text can hold beyond the fewest characters its value needs (Inspection.spelled) without
// hiding anything: a duplicate entry costs at least 5 (`"":0,`), a \u escape 5 (6 for 1).
// Less than that is whitespace or a longer number literal (`1.0`, `1000` for `1e3`).
const HIDDEN_MIN = 5;

// Shows at most this many characters of an offending literal in a message.
const SHOWN = 40;

function shown(literal: string): string {
  return literal.length > SHOWN ? `${literal.slice(0, SHOWN)}... (${literal.length} characters)` : literal;
}

/**
 * Decodes one payload (no header) under the strict wire profile (C1). When several rules are
 * broken at once the code is the first of: FRAME_EMPTY / FRAME_TOO_LARGE, FRAME_INVALID_UTF8,
 * FRAME_BOM, FRAME_TOO_DEEP, FRAME_INVALID_JSON, FRAME_LONE_SURROGATE, FRAME_NON_FINITE,
 * FRAME_UNSAFE_INTEGER, FRAME_DUPLICATE_KEY.
 */
export function decodePayload(bytes: Uint8Array): unknown {
  const text = readText(bytes);
  const value = parse(text);
  // Fast path: JSON.parse plus one walk settle almost every payload; the lexical scan runs
  // only when something needs the source text to decide (and then decides everything).
  // The walk checks numbers and depth and counts the fewest characters a text of the value can
  // have (Inspection.spelled); a text less than HIDDEN_MIN longer holds no duplicate key and no
  // \u escape, which settles compact payloads without searching the text at all.
  let seen = inspectParsed(value, false);
  if (seen.clean && text.length - seen.spelled < HIDDEN_MIN) return value;
  // A lone surrogate can only come from a \u escape (the text was decoded fatally), so the
  // strings are only checked when the text holds one; one search is cheaper than that walk.
  // Long texts are searched as UTF-8 bytes (half the memory of a two-byte string; every
  // character searched for is ASCII, so byte and character counts agree).
  // Stryker disable next-line ConditionalExpression,EqualityOperator: bytes or text is a speed choice; both searches give the same answers
  const source = bytes.length > 4096 ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) : text;
  // Stryker disable next-line StringLiteral: an empty needle makes every text "hold a \u", which only skips a speed-up
  const escapes = source.includes("\\u");
  if (escapes && seen.clean) seen = inspectParsed(value, true);
  // The parsed keys are as many as the keys of the text (so none was a duplicate) when they
  // reach an upper bound of those (one walk over colons or quotes); the exact count decides
  // otherwise (colons in the text, less those in the parsed strings).
  if (seen.clean && (keyBound(text) === seen.keys || keysAccountedFor(source, value, seen.keys, escapes))) return value;
  checkStrictly(text, value);
  return value;
}

/** decodePayload without the fast path: always the full lexical check (tests compare the two). */
export function decodePayloadExhaustively(bytes: Uint8Array): unknown {
  const text = readText(bytes);
  const value = parse(text);
  checkStrictly(text, value);
  return value;
}

// The rules that come before JSON: length, UTF-8, BOM.
function readText(bytes: Uint8Array): string {
  checkFrameLength(bytes.length);
  const text = decodeUtf8(bytes);
  if (text.charCodeAt(0) === 0xfeff) throw new FrameError("FRAME_BOM", "payload starts with a byte-order mark (ef bb bf)");
  return text;
}

// JSON.parse, with FRAME_TOO_DEEP before FRAME_INVALID_JSON for text that does not parse.
function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    return refuseUnparsable(text, cause);
  }
}

function refuseUnparsable(text: string, cause: unknown): never {
  const scan = scanText(text);
  if (scan.tooDeepAt !== -1) {
    throw new FrameError("FRAME_TOO_DEEP", `nesting deeper than ${MAX_DEPTH} at character ${scan.tooDeepAt}`);
  }
  throw new FrameError("FRAME_INVALID_JSON", `invalid JSON: ${(cause as Error).message}`, { cause });
}

// The precise check of a text that parsed: every remaining rule, in precedence order.
function checkStrictly(text: string, value: unknown): void {
  const scan = scanText(text);
  if (scan.tooDeepAt !== -1) {
    throw new FrameError("FRAME_TOO_DEEP", `nesting deeper than ${MAX_DEPTH} at character ${scan.tooDeepAt}`);
  }
  if (scan.loneSurrogateAt !== -1) {
    const escape = text.slice(scan.loneSurrogateAt, scan.loneSurrogateAt + 6);
    throw new FrameError("FRAME_LONE_SURROGATE", `lone surrogate escape ${escape} at character ${scan.loneSurrogateAt}`);
  }
  if (scan.nonFinite !== undefined) {
    throw new FrameError("FRAME_NON_FINITE", `number literal ${shown(scan.nonFinite)} overflows a double`);
  }
  if (scan.unsafeInteger !== undefined) {
    throw new FrameError("FRAME_UNSAFE_INTEGER", `integer literal ${shown(scan.unsafeInteger)} is beyond ±(2^53 - 1)`);
  }
  if (scan.keys > 1 && countParsedKeys(value) !== scan.keys) {
    // Stryker disable next-line StringLiteral: unreachable; the counts differ only on a duplicate, which findDuplicateKey then finds
    const key = findDuplicateKey(text) ?? "?";
    throw new FrameError("FRAME_DUPLICATE_KEY", `duplicate object key ${JSON.stringify(shown(key))}`);
  }
}
