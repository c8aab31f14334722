// The pixel size of a displayed image (C20's `[image/png 640x480 ...]` line), read from the header
// bytes alone: PNG's IHDR, JPEG's first start-of-frame marker. The envelope already checked the
// format's signature; a header too short or malformed to say is `null`, never an error.

/** Width and height in pixels, or nulls when the header does not say. */
export interface ImageSize {
  width: number | null;
  height: number | null;
}

const UNKNOWN: ImageSize = { width: null, height: null };

/** The size of a PNG or JPEG image from its bytes. */
export function imageSize(mime: string, bytes: Buffer): ImageSize {
  if (mime === "image/png") return pngSize(bytes);
  if (mime === "image/jpeg") return jpegSize(bytes);
  return UNKNOWN;
}

/** PNG: the signature (8 bytes), then IHDR's length and type, then width and height (big-endian u32). */
function pngSize(b: Buffer): ImageSize {
  if (b.length < 24 || b.toString("latin1", 12, 16) !== "IHDR") return UNKNOWN;
  const width = b.readUInt32BE(16);
  const height = b.readUInt32BE(20);
  return width > 0 && height > 0 ? { width, height } : UNKNOWN;
}

/** SOF markers carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not. */
function isStartOfFrame(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

/** JPEG: walk the marker segments from SOI to the first SOF (height, then width, big-endian u16). */
function jpegSize(b: Buffer): ImageSize {
  let at = 2;
  while (at + 4 <= b.length) {
    if (b[at] !== 0xff) return UNKNOWN;
    const marker = b[at + 1]!;
    // Fill bytes, and the markers that stand alone (TEM, RSTn).
    if (marker === 0xff) {
      at += 1;
      continue;
    }
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    // Start of scan or end of image before any frame header: nothing to read.
    if (marker === 0xda || marker === 0xd9) return UNKNOWN;
    const length = b.readUInt16BE(at + 2);
    if (length < 2) return UNKNOWN;
    if (isStartOfFrame(marker)) {
      if (at + 9 > b.length) return UNKNOWN;
      const height = b.readUInt16BE(at + 5);
      const width = b.readUInt16BE(at + 7);
      return width > 0 && height > 0 ? { width, height } : UNKNOWN;
    }
    at += 2 + length;
  }
  return UNKNOWN;
}
