import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EnvelopeError } from "./error.js";
import { parseReplyValue } from "./parse.js";
import { REPLY_VALUE_SCHEMAS, type ReplyMethod } from "./reply.js";

interface Case {
  description: string;
  input: { method: ReplyMethod; value: unknown };
  expected?: unknown;
  error?: { code: string; path: string };
}

const FILE = fileURLToPath(new URL("../../../fixtures/replies/maintenance-orientation.json", import.meta.url));
const cases = (JSON.parse(readFileSync(FILE, "utf8")) as { cases: Case[] }).cases;

describe("fixtures/replies/maintenance-orientation.json", () => {
  it("covers every pinned method with a valid and an invalid case", () => {
    expect(new Set(cases.map((item) => item.description)).size).toBe(cases.length);
    for (const method of Object.keys(REPLY_VALUE_SCHEMAS)) {
      expect(cases.some((item) => item.input.method === method && item.expected), method).toBe(true);
      expect(cases.some((item) => item.input.method === method && item.error), method).toBe(true);
    }
  });

  it.each(cases.map((item) => [item.description, item] as const))("%s", (_description, item) => {
    if (item.error) {
      let thrown: unknown;
      try {
        parseReplyValue(item.input.method, item.input.value);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(EnvelopeError);
      expect({ code: (thrown as EnvelopeError).code, path: (thrown as EnvelopeError).path }).toEqual(item.error);
    } else {
      const output = parseReplyValue(item.input.method, item.input.value);
      expect(output).toEqual(item.expected);
      expect(output).not.toBe(item.input.value);
    }
  });

  it("a method without a pinned shape is a RangeError, not a pass", () => {
    expect(() => parseReplyValue("local.send" as ReplyMethod, {})).toThrow(RangeError);
    expect(() => parseReplyValue("local.send" as ReplyMethod, {})).toThrow('no reply shape is pinned for "local.send"');
  });
});
