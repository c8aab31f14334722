import { HEADER_BYTES } from "./constants";
import { decodePayload } from "./decode";
import { FrameError, isFrameError } from "./errors";
import { checkFrameLength } from "./length";

/**
 * Streaming frame decoder: push chunks of any size, get every whole value back in order.
 * The length is checked from the 4 header bytes before any payload is buffered; a payload
 * split across chunks is copied once into a buffer of exactly its length, and a payload that
 * arrives whole inside one chunk is decoded in place. After any error the decoder is
 * poisoned: every later push or end throws FRAME_POISONED and no value is ever yielded again.
 */
export class FrameDecoder {
  readonly #header = new Uint8Array(HEADER_BYTES);
  #headerFill = 0;
  #payload: Uint8Array | null = null;
  #payloadFill = 0;
  #poisoned = false;

  /** True once an error has been thrown; the decoder then refuses all further input. */
  get poisoned(): boolean {
    return this.#poisoned;
  }

  /** Bytes of the current, incomplete frame held so far (header bytes included). */
  get bufferedBytes(): number {
    return this.#payload === null ? this.#headerFill : HEADER_BYTES + this.#payloadFill;
  }

  /**
   * Feeds one chunk; returns the values of the frames it completed. On a bad frame it throws a
   * FrameError whose `values` holds the values this chunk completed before that frame.
   */
  push(chunk: Uint8Array): unknown[] {
    if (this.#poisoned) throw poisonedError();
    const values: unknown[] = [];
    try {
      this.#consume(chunk, values);
    } catch (error) {
      this.#poison();
      if (isFrameError(error)) error.values = values;
      throw error;
    }
    return values;
  }

  /** Declares the end of the stream: FRAME_TRUNCATED if it stopped inside a frame. */
  end(): void {
    if (this.#poisoned) throw poisonedError();
    if (this.bufferedBytes === 0) return;
    const message =
      this.#payload === null
        ? `stream ended inside a frame header (${this.#headerFill} of ${HEADER_BYTES} bytes)`
        : `stream ended inside a frame (${this.#payloadFill} of ${this.#payload.length} payload bytes)`;
    this.#poison();
    throw new FrameError("FRAME_TRUNCATED", message);
  }

  #poison(): void {
    this.#poisoned = true;
    this.#payload = null;
    this.#payloadFill = 0;
    this.#headerFill = 0;
  }

  #consume(chunk: Uint8Array, values: unknown[]): void {
    const n = chunk.length;
    let i = 0;
    while (i < n) {
      const payload = this.#payload;
      if (payload !== null) {
        const take = Math.min(payload.length - this.#payloadFill, n - i);
        payload.set(chunk.subarray(i, i + take), this.#payloadFill);
        this.#payloadFill += take;
        i += take;
        if (this.#payloadFill === payload.length) {
          this.#payload = null;
          this.#payloadFill = 0;
          values.push(decodePayload(payload));
        }
        continue;
      }
      let length: number;
      if (this.#headerFill === 0 && n - i >= HEADER_BYTES) {
        length = ((chunk[i]! << 24) | (chunk[i + 1]! << 16) | (chunk[i + 2]! << 8) | chunk[i + 3]!) >>> 0;
        i += HEADER_BYTES;
      } else {
        while (this.#headerFill < HEADER_BYTES && i < n) this.#header[this.#headerFill++] = chunk[i++]!;
        if (this.#headerFill < HEADER_BYTES) return;
        const h = this.#header;
        length = ((h[0]! << 24) | (h[1]! << 16) | (h[2]! << 8) | h[3]!) >>> 0;
        this.#headerFill = 0;
      }
      checkFrameLength(length);
      if (n - i >= length) {
        values.push(decodePayload(chunk.subarray(i, i + length)));
        i += length;
      } else {
        this.#payload = new Uint8Array(length);
        this.#payload.set(chunk.subarray(i), 0);
        this.#payloadFill = n - i;
        i = n;
      }
    }
  }
}

function poisonedError(): FrameError {
  return new FrameError("FRAME_POISONED", "decoder is poisoned by an earlier error; open a new connection");
}
