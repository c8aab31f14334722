import { describe, expect, it } from "vitest";
import { FrameDecoder } from "./decoder";
import { encodeFrame } from "./encode";
import type { FrameError } from "./errors";

const frameOf = (text: string) => {
  const body = new TextEncoder().encode(text);
  const out = new Uint8Array(4 + body.length);
  new DataView(out.buffer).setUint32(0, body.length);
  out.set(body, 4);
  return out;
};

function thrown(fn: () => unknown): FrameError {
  try {
    fn();
  } catch (error) {
    return error as FrameError;
  }
  throw new Error("expected a throw");
}

describe("FrameDecoder", () => {
  it("reports bytes held for the current frame, header included, and 0 at a boundary", () => {
    const decoder = new FrameDecoder();
    const frame = encodeFrame([1, 2, 3]);
    expect(decoder.bufferedBytes).toBe(0);
    decoder.push(frame.subarray(0, 2));
    expect(decoder.bufferedBytes).toBe(2);
    decoder.push(frame.subarray(2, 6));
    expect(decoder.bufferedBytes).toBe(6);
    expect(decoder.push(frame.subarray(6))).toEqual([[1, 2, 3]]);
    expect(decoder.bufferedBytes).toBe(0);
    expect(() => decoder.end()).not.toThrow();
  });

  it("holds nothing of a too-large frame: the header alone poisons it", () => {
    const decoder = new FrameDecoder();
    const error = thrown(() => decoder.push(Uint8Array.of(0x00, 0x10, 0x00, 0x01, 0x22)));
    expect(error.code).toBe("FRAME_TOO_LARGE");
    expect(error.message).toContain("1048577");
    expect(decoder.poisoned).toBe(true);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it("hands back the values a chunk completed before the bad frame on the error", () => {
    const decoder = new FrameDecoder();
    const chunk = Uint8Array.from([...frameOf("1"), ...frameOf("2"), ...frameOf("[1,]"), ...frameOf("4")]);
    const error = thrown(() => decoder.push(chunk));
    expect(error.code).toBe("FRAME_INVALID_JSON");
    expect(error.values).toEqual([1, 2]);
  });

  it("never yields again once poisoned, not even a perfect frame", () => {
    const decoder = new FrameDecoder();
    thrown(() => decoder.push(frameOf("[")));
    expect(decoder.poisoned).toBe(true);
    for (let i = 0; i < 3; i++) expect(thrown(() => decoder.push(encodeFrame(i))).code).toBe("FRAME_POISONED");
    expect(thrown(() => decoder.end()).code).toBe("FRAME_POISONED");
  });

  it("end inside a payload is FRAME_TRUNCATED and poisons", () => {
    const decoder = new FrameDecoder();
    decoder.push(encodeFrame("hello").subarray(0, 7));
    const error = thrown(() => decoder.end());
    expect(error.code).toBe("FRAME_TRUNCATED");
    expect(error.message).toContain("3 of 7 payload bytes");
    expect(decoder.poisoned).toBe(true);
    expect(thrown(() => decoder.push(encodeFrame(1))).code).toBe("FRAME_POISONED");
  });

  it("end at a boundary is fine and the decoder keeps working", () => {
    const decoder = new FrameDecoder();
    expect(decoder.push(encodeFrame(1))).toEqual([1]);
    decoder.end();
    expect(decoder.push(encodeFrame(2))).toEqual([2]);
  });

  it("does not keep a reference to the caller's chunk for a split payload", () => {
    const decoder = new FrameDecoder();
    const frame = encodeFrame("abcdef");
    const first = frame.slice(0, 7);
    decoder.push(first);
    first.fill(0x41); // the caller reuses its buffer
    expect(decoder.push(frame.slice(7))).toEqual(["abcdef"]);
  });

  it("decodes a 1 MiB frame arriving in 1,000-byte chunks", () => {
    const value = "x".repeat(1_048_574);
    const frame = encodeFrame(value);
    const decoder = new FrameDecoder();
    const out: unknown[] = [];
    for (let i = 0; i < frame.length; i += 1000) out.push(...decoder.push(frame.subarray(i, i + 1000)));
    expect(out).toHaveLength(1);
    expect(out[0] === value).toBe(true);
  });
});

describe("FrameDecoder messages", () => {
  it("end inside a header says how many of its 4 bytes came", () => {
    const decoder = new FrameDecoder();
    decoder.push(Uint8Array.of(0, 0));
    expect(thrown(() => decoder.end())).toMatchObject({ code: "FRAME_TRUNCATED", message: "stream ended inside a frame header (2 of 4 bytes)" });
  });

  it("a poisoned decoder says why and what to do", () => {
    const decoder = new FrameDecoder();
    thrown(() => decoder.push(frameOf("[")));
    expect(thrown(() => decoder.push(encodeFrame(1))).message).toBe("decoder is poisoned by an earlier error; open a new connection");
  });

  it("passes an error that is not a FrameError through untouched, and is poisoned by it", () => {
    const decoder = new FrameDecoder();
    const error = thrown(() => decoder.push(null as unknown as Uint8Array));
    expect(error).toBeInstanceOf(TypeError);
    expect(error).not.toHaveProperty("values");
    expect(decoder.poisoned).toBe(true);
  });
});
