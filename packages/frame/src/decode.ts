import { MAX_DEPTH } from "./constants";
import { countParsedKeys, findDuplicateKey } from "./duplicates";
import { FrameError } from "./errors";
import { checkFrameLength } from "./length";
import { scanText } from "./scan";
import { decodeUtf8 } from "./utf8";

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
  checkFrameLength(bytes.length);
  const text = decodeUtf8(bytes);
  if (text.charCodeAt(0) === 0xfeff) throw new FrameError("FRAME_BOM", "payload starts with a byte-order mark (ef bb bf)");
  const scan = scanText(text);
  if (scan.tooDeepAt !== -1) {
    throw new FrameError("FRAME_TOO_DEEP", `nesting deeper than ${MAX_DEPTH} at character ${scan.tooDeepAt}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new FrameError("FRAME_INVALID_JSON", `invalid JSON: ${(cause as Error).message}`, { cause });
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
    const key = findDuplicateKey(text) ?? "?";
    throw new FrameError("FRAME_DUPLICATE_KEY", `duplicate object key ${JSON.stringify(shown(key))}`);
  }
  return value;
}
