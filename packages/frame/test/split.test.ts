// Split-at-every-offset tests, after vscode-languageserver-node's messages tests.
import { describe, expect, it } from "vitest";
import { encodeFrame, FrameDecoder, isFrameError } from "../src/index";
import { frameOf } from "./support/corpus";

const VALUES: unknown[] = [
  { version: 1, session_id: "root", generation: "g-1", message: { kind: "execute", id: "op-1", code: "print('é😀')" } },
  [1, -2.5, true, null, "\u2028"],
  "😀".repeat(5),
];

// Built inside each test, not while vitest collects the file: under `pnpm mutate frame` a fixture
// built at collection time makes every encode mutant it reaches "static" (rerun by every test).
const streamOf = () => Uint8Array.from(VALUES.flatMap((v) => [...encodeFrame(v)]));

function decodeChunks(chunks: Uint8Array[]): unknown[] {
  const decoder = new FrameDecoder();
  const out = chunks.flatMap((c) => decoder.push(c));
  decoder.end();
  return out;
}

describe("split at every offset", () => {
  it("two chunks, split anywhere, give the same values", () => {
    const stream = streamOf();
    for (let k = 0; k <= stream.length; k++) {
      expect(decodeChunks([stream.subarray(0, k), stream.subarray(k)])).toEqual(VALUES);
    }
  });

  it("three chunks, split at every pair of offsets, give the same values", () => {
    const stream = streamOf();
    for (let a = 0; a <= stream.length; a += 3) {
      for (let b = a; b <= stream.length; b += 5) {
        expect(decodeChunks([stream.subarray(0, a), stream.subarray(a, b), stream.subarray(b)])).toEqual(VALUES);
      }
    }
  });

  it("one byte at a time gives the same values", () => {
    const stream = streamOf();
    expect(decodeChunks(Array.from(stream, (b) => Uint8Array.of(b)))).toEqual(VALUES);
  });

  it("a stream cut at every offset inside a frame is FRAME_TRUNCATED after the whole frames before it", () => {
    const stream = streamOf();
    const boundaries = new Set<number>();
    let at = 0;
    for (const v of VALUES) boundaries.add((at += encodeFrame(v).length));
    for (let k = 1; k < stream.length; k++) {
      if (boundaries.has(k)) continue;
      const decoder = new FrameDecoder();
      const values = decoder.push(stream.subarray(0, k));
      expect(values).toEqual(VALUES.slice(0, values.length));
      expect(() => decoder.end()).toThrow(expect.objectContaining({ code: "FRAME_TRUNCATED" }));
    }
  });

  it("an invalid frame gives the same values and code wherever the stream is split", () => {
    const bad = Uint8Array.from([...encodeFrame(1), ...frameOf('{"a":1,"a":2}'), ...encodeFrame(3)]);
    for (let k = 0; k <= bad.length; k++) {
      const decoder = new FrameDecoder();
      const values: unknown[] = [];
      let code: string | undefined;
      for (const chunk of [bad.subarray(0, k), bad.subarray(k)]) {
        try {
          values.push(...decoder.push(chunk));
        } catch (error) {
          if (!isFrameError(error)) throw error;
          values.push(...error.values);
          code = error.code;
          break;
        }
      }
      expect({ values, code }).toEqual({ values: [1], code: "FRAME_DUPLICATE_KEY" });
    }
  });
});
