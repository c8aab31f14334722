import { MAX_DEPTH, MAX_SAFE_INTEGER } from "./constants";

/** What one lexical pass over a payload's text found; only meaningful once the text parses. */
export interface TextScan {
  /** Offset of the bracket that first nests deeper than MAX_DEPTH, or -1. */
  tooDeepAt: number;
  /** Object keys in the source (strings followed by `:`), duplicates included. */
  keys: number;
  /** Offset of the first `\u` escape that leaves a lone surrogate, or -1. */
  loneSurrogateAt: number;
  /** The first number literal that overflows a double, if any. */
  nonFinite: string | undefined;
  /** The first integer literal (no fraction, no exponent) beyond ±(2^53 - 1), if any. */
  unsafeInteger: string | undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

// Value of the 4 hex digits at `at`, or -1 when they are not 4 hex digits.
function hex4(text: string, at: number): number {
  let v = 0;
  for (let k = at; k < at + 4; k++) {
    const c = text.charCodeAt(k);
    let d: number;
    if (c >= 0x30 && c <= 0x39) d = c - 0x30;
    else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
    else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
    else {
      // Stryker disable next-line UnaryOperator: +1, like -1, is below 0xd800, so it also reads as "not a surrogate"
      return -1;
    }
    v = (v << 4) | d;
  }
  return v;
}

/**
 * One pass over the text, skipping string bodies with indexOf. It is purely lexical so it
 * is defined for any text, valid JSON or not: a backslash, in a string or not, hides the next
 * code unit; outside a string `[`/`{` nest one deeper and `]`/`}` one shallower (depth may go
 * negative); `"` starts or ends a string, and an unterminated one runs to the end. The Python
 * decoder applies the same rule, so both report FRAME_TOO_DEEP for the same bytes.
 */
export function scanText(text: string): TextScan {
  const n = text.length;
  let depth = 0;
  let keys = 0;
  let loneSurrogateAt = -1;
  let nonFinite: string | undefined;
  let unsafeInteger: string | undefined;
  // Next quote / backslash at or after the cursor, found lazily so no byte is searched twice.
  // Stryker disable next-line StringLiteral: an empty needle finds 0, below every cursor, so the first string searches again
  let dq = text.indexOf('"');
  // Stryker disable next-line StringLiteral: an empty needle finds 0, below every cursor, so the first string searches again
  let bs = text.indexOf("\\");
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let j = i + 1;
      let end = -1;
      for (;;) {
        if (dq !== -1 && dq < j) dq = text.indexOf('"', j);
        if (dq === -1) break; // unterminated: the rest of the text is string body
        if (bs !== -1 && bs < j) bs = text.indexOf("\\", j);
        if (bs === -1 || bs > dq) {
          end = dq;
          break;
        }
        // An escape before the next quote; it hides the code unit after the backslash.
        let next = bs + 2;
        if (text.charCodeAt(bs + 1) === 0x75 /* u */) {
          // Stryker disable next-line UnaryOperator: +1, like -1, is below 0xd800, so it also reads as "not a surrogate"
          const unit = (text.charCodeAt(bs + 2) | 0x20) === 0x64 /* d */ ? hex4(text, bs + 2) : -1;
          if (unit >= 0xd800 && unit <= 0xdbff) {
            const low =
              // Stryker disable next-line UnaryOperator: +1, like -1, is below 0xdc00, so it also reads as "not a low surrogate"
              text.charCodeAt(bs + 6) === BACKSLASH && text.charCodeAt(bs + 7) === 0x75 ? hex4(text, bs + 8) : -1;
            if (low >= 0xdc00 && low <= 0xdfff) next = bs + 12;
            else if (loneSurrogateAt === -1) loneSurrogateAt = bs;
          } else if (unit >= 0xdc00 && unit <= 0xdfff && loneSurrogateAt === -1) {
            loneSurrogateAt = bs;
          }
        }
        j = next;
      }
      if (end === -1) break;
      i = end + 1;
      while (i < n) {
        const w = text.charCodeAt(i);
        if (w === 0x20 || w === 0x0a || w === 0x0d || w === 0x09) i++;
        else break;
      }
      if (text.charCodeAt(i) === 0x3a /* : */) keys++;
      continue;
    }
    if (c === BACKSLASH) {
      i += 2; // only in invalid JSON; the rule is the same as inside strings
      continue;
    }
    if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_DEPTH) {
        return { tooDeepAt: i, keys, loneSurrogateAt, nonFinite, unsafeInteger };
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      let j = i + 1;
      let isFloat = false;
      // Stryker disable next-line BooleanLiteral: true only sends short fraction-only literals to the overflow check, which they pass
      let hasExponent = false;
      while (j < n) {
        const d = text.charCodeAt(j);
        if ((d >= 0x30 && d <= 0x39) || d === 0x2d || d === 0x2b) j++;
        else if (d === 0x2e) {
          isFloat = true;
          j++;
        } else if (d === 0x65 || d === 0x45) {
          isFloat = hasExponent = true;
          j++;
        } else break;
      }
      if (isFloat) {
        // Without an exponent a literal needs over 308 integer digits to overflow.
        if (nonFinite === undefined && (hasExponent || j - i > 308)) {
          const literal = text.slice(i, j);
          if (!Number.isFinite(Number(literal))) nonFinite = literal;
        }
      } else if (unsafeInteger === undefined) {
        const digits = j - i - (c === 0x2d ? 1 : 0);
        if (digits > 16 || (digits === 16 && Math.abs(Number(text.slice(i, j))) > MAX_SAFE_INTEGER)) {
          unsafeInteger = text.slice(i, j);
        }
      }
      i = j;
      continue;
    }
    i++;
  }
  return { tooDeepAt: -1, keys, loneSurrogateAt, nonFinite, unsafeInteger };
}
