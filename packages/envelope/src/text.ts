/**
 * UTF-8 byte length of a string without allocating. A lone surrogate counts 3 bytes, as
 * TextEncoder (U+FFFD) and Python's "surrogatepass" both count it.
 */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) continue;
    if (unit < 0x800) {
      bytes += 1;
    } else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      // Stryker disable next-line BlockStatement: without this block the high unit adds 0 and the low one then adds 2: the pair is 4 bytes all the same
      if (next >= 0xdc00 && next <= 0xdfff) {
        // A pair is 2 units and 4 bytes.
        bytes += 2;
        i++;
      } else {
        bytes += 2;
      }
    } else {
      bytes += 2;
    }
  }
  return bytes;
}

/** True when `text` is at most `limit` UTF-8 bytes; skips the count when length alone decides. */
export function fitsUtf8(text: string, limit: number): boolean {
  if (text.length > limit) return false;
  if (text.length * 3 <= limit) return true;
  return utf8Length(text) <= limit;
}
