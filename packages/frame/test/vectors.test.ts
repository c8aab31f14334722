import { describe, expect, it } from "vitest";
import { decodePayload, encodeFrame, encodePayload, FrameDecoder, isFrameError } from "../src/index";
import { decodePayloadExhaustively } from "../src/decode";
import { caseChunks, concat, loadFrameVectors, revive, type FrameCase } from "./support/vectors";

interface Outcome {
  values: unknown[];
  code?: string;
}

// Pushes the chunks in order; after the first error every later push and end must be poisoned.
function run(chunks: Uint8Array[], end: boolean): Outcome {
  const decoder = new FrameDecoder();
  const values: unknown[] = [];
  for (let k = 0; k < chunks.length; k++) {
    try {
      values.push(...decoder.push(chunks[k]!));
    } catch (error) {
      if (!isFrameError(error)) throw error;
      values.push(...error.values);
      expect(decoder.poisoned).toBe(true);
      for (const later of chunks.slice(k + 1)) expect(() => decoder.push(later)).toThrow(expect.objectContaining({ code: "FRAME_POISONED" }));
      expect(() => decoder.end()).toThrow(expect.objectContaining({ code: "FRAME_POISONED" }));
      return { values, code: error.code };
    }
  }
  if (end) {
    try {
      decoder.end();
    } catch (error) {
      if (!isFrameError(error)) throw error;
      return { values, code: error.code };
    }
  }
  return { values };
}

function expectedOutcome(c: FrameCase): Outcome {
  if (c.error) return { values: revive(c.yielded ?? []) as unknown[], code: c.error.code };
  return { values: revive(c.expected) as unknown[] };
}

const files = loadFrameVectors();

describe.each(files.filter((f) => f.kind === "decode").map((f) => [f.name, f.cases] as const))("decode vectors %s", (_name, cases) => {
  it.each(cases.map((c) => [c.description, c] as const))("%s", (_d, c) => {
    const want = expectedOutcome(c);
    const chunks = caseChunks(c.input);
    const end = c.input.end !== false;
    const whole = concat(chunks);
    expect(run(chunks, end)).toEqual(want);
    expect(run([whole], end)).toEqual(want);
    if (whole.length <= 4096) {
      expect(run(Array.from(whole, (b) => Uint8Array.of(b)), end)).toEqual(want);
    }
    // A stream that is exactly one frame also goes through decodePayload.
    if (whole.length > 4 && new DataView(whole.buffer, whole.byteOffset).getUint32(0) === whole.length - 4 && !c.yielded) {
      for (const decode of [decodePayload, decodePayloadExhaustively]) {
        let got: Outcome;
        try {
          got = { values: [decode(whole.subarray(4))] };
        } catch (error) {
          if (!isFrameError(error)) throw error;
          got = { values: [], code: error.code };
        }
        expect(got).toEqual(want);
      }
    }
  });
});

describe.each(files.filter((f) => f.kind === "encode").map((f) => [f.name, f.cases] as const))("encode vectors %s", (_name, cases) => {
  it.each(cases.map((c) => [c.description, c] as const))("%s", (_d, c) => {
    const value = revive((c.input as { value: unknown }).value);
    if (c.error) {
      expect(() => encodePayload(value)).toThrow(expect.objectContaining({ code: c.error.code }));
      expect(() => encodeFrame(value)).toThrow(expect.objectContaining({ code: c.error.code }));
      return;
    }
    const want = c.expected as { payload?: string; length?: number };
    const payload = encodePayload(value);
    if (want.payload !== undefined) expect(new TextDecoder().decode(payload)).toBe(want.payload);
    if (want.length !== undefined) expect(payload.length).toBe(want.length);
    const frame = encodeFrame(value);
    expect(new DataView(frame.buffer, frame.byteOffset).getUint32(0)).toBe(payload.length);
    expect(Buffer.from(frame.subarray(4)).equals(payload)).toBe(true);
    expect(decodePayload(payload)).toEqual(value);
  });
});

it("loads every frame vector file", () => {
  expect(files.map((f) => f.name)).toEqual(
    expect.arrayContaining(["depth.json", "duplicates.json", "encode.json", "length.json", "numbers.json", "precedence.json", "stream.json", "surrogates.json", "syntax.json", "utf8.json", "valid.json"]),
  );
});
