import { describe, expect, it } from "vitest";
import { loadVectors, thrownCode, vectorFiles } from "../test/vectors.js";
import { stripCacheOptions, type RouteCacheProfile } from "./options.js";
import { readUsage, type ReadUsageOptions } from "./read.js";
import { readUsageStream } from "./stream.js";

interface ReadInput {
  response?: unknown;
  chunks?: unknown[];
  options?: ReadUsageOptions;
}

function run(input: ReadInput): unknown {
  if (input.chunks !== undefined) return readUsageStream(input.chunks, input.options);
  return readUsage(input.response, input.options);
}

const STRIP = "strip-cache-options.json";

it("fixtures/usage holds every provider and the stream shapes", () => {
  expect(vectorFiles()).toEqual([
    "anthropic.json",
    "deepseek.json",
    "errors.json",
    "gemini.json",
    "openai-chat.json",
    "openai-responses.json",
    "openrouter.json",
    "streams.json",
    STRIP,
  ]);
});

for (const file of vectorFiles().filter((name) => name !== STRIP)) {
  describe(file, () => {
    for (const v of loadVectors(file)) {
      it(v.description, () => {
        const input = v.input as ReadInput;
        if (v.error) {
          expect(thrownCode(() => run(input))).toBe(v.error.code);
          return;
        }
        // toStrictEqual: a count the route did not send must be an absent property, not undefined.
        expect(run(input)).toStrictEqual(v.expected);
      });
    }
  });
}

describe(STRIP, () => {
  for (const v of loadVectors(STRIP)) {
    it(v.description, () => {
      const input = v.input as { options: Record<string, unknown>; profile?: RouteCacheProfile | null };
      const before = structuredClone(input);
      if (v.error) {
        expect(thrownCode(() => stripCacheOptions(input.options, input.profile))).toBe(v.error.code);
        return;
      }
      const out = stripCacheOptions(input.options, input.profile);
      expect(out).toStrictEqual(v.expected);
      expect(out).not.toBe(input.options);
      expect(input).toStrictEqual(before);
    });
  }
});
