import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { thrownCode } from "../test/vectors.js";
import { createUsageStreamReader, readUsageStream } from "./stream.js";

const gemini = (prompt: number, candidates: number) => ({
  candidates: [{ content: { parts: [{ text: "x" }], role: "model" }, index: 0 }],
  usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: candidates, totalTokenCount: prompt + candidates },
});

describe("createUsageStreamReader", () => {
  it("gives the same record incrementally as readUsageStream", () => {
    const chunks = [gemini(5, 1), gemini(5, 7), gemini(5, 9)];
    const reader = createUsageStreamReader();
    for (const chunk of chunks) reader.push(chunk);
    expect(reader.finish()).toStrictEqual(readUsageStream(chunks));
  });

  it("refuses a chunk after finish()", () => {
    const reader = createUsageStreamReader();
    reader.finish();
    expect(thrownCode(() => reader.push(gemini(1, 1)))).toBe("USAGE_STREAM_FINISHED");
  });

  it("accepts any iterable, such as a generator", () => {
    function* chunks() {
      yield gemini(3, 1);
      yield gemini(3, 2);
    }
    expect(readUsageStream(chunks()).completion_tokens).toBe(2);
  });

  it("refuses a non-iterable", () => {
    expect(thrownCode(() => readUsageStream(42 as never))).toBe("USAGE_INVALID_CHUNK");
  });

  it("ignores chunks that say nothing about usage or shape", () => {
    const record = readUsageStream([{ type: "error", error: { type: "overloaded_error" } }, {}]);
    expect(record).toStrictEqual({ shape: "unknown", raw: [], flags: [] });
  });

  it("Gemini running totals: the last snapshot wins, monotonic streams are never flagged", () => {
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 10_000 }), { minLength: 1, maxLength: 20 }), (steps) => {
        let candidates = 0;
        const chunks = steps.map((step) => gemini(40, (candidates += step)));
        const record = readUsageStream(chunks);
        expect(record.completion_tokens).toBe(candidates);
        expect(record.raw).toHaveLength(steps.length);
        expect(record.flags).toEqual([]);
      }),
    );
  });

  it("Anthropic: later usage fields win field by field, earlier ones survive", () => {
    const record = readUsageStream([
      { type: "message_start", message: { usage: { input_tokens: 10, cache_read_input_tokens: 4, output_tokens: 1 } } },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 30, input_tokens: null } },
    ]);
    expect(record).toMatchObject({ uncached_prompt_tokens: 10, cached_prompt_tokens: 4, completion_tokens: 30 });
    expect(Object.hasOwn(record, "prompt_tokens")).toBe(false);
  });

  it("a chat stream whose chunks all carry usage: null gives absent fields", () => {
    const record = readUsageStream([{ object: "chat.completion.chunk", choices: [], usage: null }]);
    expect(record).toStrictEqual({ shape: "openai_chat", raw: [], flags: [] });
  });
});
