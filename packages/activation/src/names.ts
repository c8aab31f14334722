// Display of raw name bytes, identical to Python's bytes.decode("utf-8", "backslashreplace"), so both
// languages name a non-UTF-8 path the same way in errors and in the shared fixtures.

function sequenceLength(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i]!;
  if (b0 < 0x80) return 1;
  let length: number;
  let lo = 0x80;
  let hi = 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    length = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    length = 3;
    if (b0 === 0xe0) lo = 0xa0; // no overlong forms
    if (b0 === 0xed) hi = 0x9f; // no surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    length = 4;
    if (b0 === 0xf0) lo = 0x90; // no overlong forms
    if (b0 === 0xf4) hi = 0x8f; // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > bytes.length) return 0;
  const b1 = bytes[i + 1]!;
  if (b1 < lo || b1 > hi) return 0;
  for (let k = 2; k < length; k++) {
    const b = bytes[i + k]!;
    if (b < 0x80 || b > 0xbf) return 0;
  }
  return length;
}

/** True when the bytes are well-formed UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF). */
export function isUtf8(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; ) {
    const n = sequenceLength(bytes, i);
    if (n === 0) return false;
    i += n;
  }
  return true;
}

/** Name bytes as text; every byte that is not part of well-formed UTF-8 shows as `\xNN`. */
export function showName(bytes: Uint8Array): string {
  let out = "";
  let start = 0;
  let i = 0;
  const flush = (end: number) => {
    if (end > start) out += Buffer.from(bytes.subarray(start, end)).toString("utf8");
  };
  while (i < bytes.length) {
    const n = sequenceLength(bytes, i);
    if (n === 0) {
      flush(i);
      out += `\\x${bytes[i]!.toString(16).padStart(2, "0")}`;
      i += 1;
      start = i;
    } else {
      i += n;
    }
  }
  flush(i);
  return out;
}
