import { isUtf8 } from "node:buffer";
import { FrameError } from "./errors";

// ignoreBOM keeps a leading U+FEFF in the text so the caller can refuse it instead of it vanishing.
// The lenient decoder (the one the bare JSON.parse baseline uses) replaces every ill-formed
// sequence with U+FFFD, so a text without one came from valid UTF-8; only a text holding one (a
// real U+FFFD or a bad byte) needs the bytes checked. The search is one memchr on a two-byte text
// and nothing on a one-byte (Latin-1) one, cheaper than isUtf8 or a fatal decoder at every size.
const lenient = new TextDecoder("utf-8", { ignoreBOM: true });

/** Decodes UTF-8 fatally (FRAME_INVALID_UTF8 names the first bad byte offset); a BOM is kept. */
export function decodeUtf8(bytes: Uint8Array): string {
  const text = lenient.decode(bytes);
  if (text.includes("\ufffd") && !isUtf8(bytes)) throw invalid(bytes);
  return text;
}

function invalid(bytes: Uint8Array): FrameError {
  const at = firstInvalidUtf8(bytes);
  const shown = Array.from(bytes.subarray(at, at + 4), (b) => b.toString(16).padStart(2, "0")).join(" ");
  return new FrameError("FRAME_INVALID_UTF8", `invalid UTF-8 at byte ${at} (${shown})`);
}

/** Offset of the first byte that starts no valid UTF-8 sequence (bytes.length when all is valid). */
export function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  const n = bytes.length;
  while (i < n) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i += 1;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0; // overlong
      if (b === 0xed) hi = 0x9f; // UTF-16 surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90; // overlong
      if (b === 0xf4) hi = 0x8f; // beyond U+10FFFF
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += need + 1;
  }
  return n;
}
