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

describe("stream classification", () => {
  it("any Anthropic event type marks an Anthropic stream, even without usage", () => {
    for (const type of ["message_stop", "content_block_start", "content_block_delta", "content_block_stop", "ping"]) {
      expect(readUsageStream([{ type }]).shape).toBe("anthropic");
    }
  });

  it("a Gemini chunk is known by usageMetadata or candidates alone", () => {
    expect(readUsageStream([{ candidates: [] }]).shape).toBe("gemini");
    expect(readUsageStream([{ usageMetadata: { promptTokenCount: 2 } }])).toMatchObject({ shape: "gemini", prompt_tokens: 2 });
  });

  it("a chat chunk is known by usage alone", () => {
    expect(readUsageStream([{ usage: { prompt_tokens: 2 } }])).toMatchObject({ shape: "openai_chat", prompt_tokens: 2 });
  });

  it("a chunk that says nothing in the middle keeps the stream's shape and flags", () => {
    const record = readUsageStream([{ choices: [], usage: { prompt_tokens: 1, prompt_tokens_details: { cached_tokens: 2 } } }, {}]);
    expect(record.shape).toBe("openai_chat");
    expect(record.flags).toEqual(["cached_exceeds_prompt"]);
  });

  it("a declared chat-family provider reads a chat stream", () => {
    for (const provider of ["openai_chat", "deepseek", "openrouter"] as const) {
      const record = readUsageStream([{ choices: [], usage: { prompt_tokens: 3 } }], { provider });
      expect(record).toMatchObject({ shape: provider, prompt_tokens: 3 });
    }
    const responses = readUsageStream([{ type: "response.completed", response: { usage: { input_tokens: 2 } } }], {
      provider: "openai_responses",
    });
    expect(responses).toMatchObject({ shape: "openai_responses", prompt_tokens: 2 });
  });

  it("takes null options as no options", () => {
    expect(createUsageStreamReader(null as never).finish().shape).toBe("unknown");
  });

  it("an OpenRouter label, once seen, is kept through later plain usage chunks", () => {
    const record = readUsageStream([
      { choices: [], usage: { prompt_tokens: 1, cost: 0.1 } },
      { choices: [], usage: { prompt_tokens: 2 } },
      { choices: [], usage: {} },
    ]);
    expect(record.shape).toBe("openrouter");
  });

  it("only a chat stream's label is refined by its usage keys", () => {
    // total_tokens is also a Responses key; in an Anthropic stream it does not relabel the stream.
    const record = readUsageStream([{ type: "message_start", message: { usage: { input_tokens: 1, total_tokens: 1 } } }]);
    expect(record.shape).toBe("anthropic");
  });

  it("a chat stream whose usage has only keys Responses shares stays a chat stream (regression)", () => {
    // total_tokens alone is read as a Responses key; the chunk was read as chat, so was the label.
    const record = readUsageStream([{ object: "chat.completion.chunk", choices: [], usage: { total_tokens: 5 } }]);
    expect(record).toStrictEqual({ shape: "openai_chat", total_tokens: 5, raw: [{ total_tokens: 5 }], flags: [] });
    const declared = readUsageStream([{ choices: [], usage: { total_tokens: 5 } }], { provider: "deepseek" });
    expect(declared.shape).toBe("deepseek");
  });

  it("flags inconsistent counts in a stream", () => {
    const record = readUsageStream([{ choices: [], usage: { prompt_tokens: 1, prompt_tokens_details: { cached_tokens: 5 } } }]);
    expect(record.flags).toEqual(["cached_exceeds_prompt"]);
  });
});

describe("stream refusals name the chunk", () => {
  it("names the path of a bad count in each family", () => {
    const cases: [unknown, string][] = [
      [{ choices: [], usage: { prompt_tokens: -1 } }, "chunk[0].usage.prompt_tokens must"],
      [{ type: "response.completed", response: { usage: { input_tokens: -1 } } }, "chunk[0].response.usage.input_tokens must"],
      [{ type: "message_start", message: { usage: { input_tokens: -1 } } }, "chunk[0].message.usage.input_tokens must"],
      [{ type: "message_delta", usage: { output_tokens: -1 } }, "chunk[0].usage.output_tokens must"],
      [{ usageMetadata: { promptTokenCount: -1 } }, "chunk[0].usageMetadata.promptTokenCount must"],
    ];
    for (const [chunk, message] of cases) expect(() => readUsageStream([chunk])).toThrow(message);
  });

  it("counts chunks in the index it names", () => {
    const reader = createUsageStreamReader();
    reader.push({ choices: [] });
    expect(() => reader.push(5)).toThrow("chunk[1] must be a parsed JSON object, got 5");
    reader.finish();
    expect(() => reader.push({})).toThrow("chunk[1] pushed after finish()");
  });

  it("names the chunk, its shape and the stream's shape on a mismatch", () => {
    expect(() => readUsageStream([{ choices: [] }, gemini(1, 1)])).toThrow(
      "chunk[1].usageMetadata reads as gemini but the stream is openai_chat",
    );
    expect(() => readUsageStream([{ type: "message_delta", usage: {} }], { provider: "deepseek" })).toThrow(
      "chunk[0].usage reads as anthropic but the stream is deepseek",
    );
  });

  it("refuses null, a string and a non-iterable object as the chunk sequence, naming it", () => {
    expect(thrownCode(() => readUsageStream(null as never))).toBe("USAGE_INVALID_CHUNK");
    expect(thrownCode(() => readUsageStream({} as never))).toBe("USAGE_INVALID_CHUNK");
    expect(() => readUsageStream("ab" as never)).toThrow('readUsageStream needs an iterable of chunks, got "ab"');
  });
});
