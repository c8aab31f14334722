/** Default capacity of a raw output tail: 8 KiB, per the spec's diagnostic tails. */
export const TAIL_BYTES = 8192;

/**
 * A fixed-size byte ring keeping the last `capacity` bytes written to it. Pushing copies at most
 * `capacity` bytes, so a flood costs constant memory however much is written.
 */
export class ByteTail {
  readonly capacity: number;
  #ring: Buffer;
  #start = 0;
  #length = 0;
  #total = 0;

  constructor(capacity: number = TAIL_BYTES) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`tail capacity must be a positive integer, got ${capacity}`);
    this.capacity = capacity;
    this.#ring = Buffer.alloc(capacity);
  }

  /** Total bytes ever pushed, including those that fell out of the tail. */
  get totalBytes(): number {
    return this.#total;
  }

  /** Append a chunk, overwriting the oldest bytes once full. */
  push(chunk: Uint8Array): void {
    this.#total += chunk.byteLength;
    const cap = this.capacity;
    const src = chunk.byteLength > cap ? chunk.subarray(chunk.byteLength - cap) : chunk;
    let end = (this.#start + this.#length) % cap;
    let offset = 0;
    while (offset < src.byteLength) {
      const n = Math.min(src.byteLength - offset, cap - end);
      this.#ring.set(src.subarray(offset, offset + n), end);
      offset += n;
      end = (end + n) % cap;
    }
    const newLength = this.#length + src.byteLength;
    if (newLength > cap) {
      this.#start = (this.#start + (newLength - cap)) % cap;
      this.#length = cap;
    } else {
      this.#length = newLength;
    }
  }

  /** The kept bytes, oldest first. */
  bytes(): Buffer {
    const first = this.#ring.subarray(this.#start, Math.min(this.#start + this.#length, this.capacity));
    const rest = this.#length - first.byteLength;
    return rest > 0 ? Buffer.concat([first, this.#ring.subarray(0, rest)]) : Buffer.from(first);
  }

  /** The kept bytes as text; a character cut at the front decodes as U+FFFD. */
  text(): string {
    return this.bytes().toString("utf8");
  }
}
