import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { keyBound } from "./keys";

// The keys of a JSON text counted the slow way: every key of every object, duplicates included.
function sourceKeys(text: string): number {
  let keys = 0;
  const walk = (t: string) => {
    // A lexical count: strings skipped exactly, a string followed by ':' is a key.
    for (let i = 0; i < t.length; i++) {
      if (t[i] !== '"') continue;
      let j = i + 1;
      while (t[j] !== '"') j += t[j] === "\\" ? 2 : 1;
      let k = j + 1;
      while (" \t\r\n".includes(t[k] ?? "x")) k++;
      if (t[k] === ":") keys++;
      i = j;
    }
  };
  walk(text);
  return keys;
}


function strings(v: unknown): string[] {
  if (typeof v === "string") return [v];
  if (typeof v !== "object" || v === null) return [];
  if (Array.isArray(v)) return v.flatMap(strings);
  return Object.entries(v).flatMap(([k, x]) => [k, ...strings(x)]);
}

describe("keyBound", () => {
  it("is the key count of compact and spaced texts, whichever walk it takes", () => {
    const colons = `{"a":"${"step: ok\\n".repeat(500)}","b":[{"c":1}]}`;
    const quotes = `{"a":"${'say \\"hi\\" '.repeat(500)}","b":{"c":{"d":null}}}`;
    const both = `{"x":"${"k: v ".repeat(300)}","y":"${'\\"q\\" '.repeat(300)}","z":1}`;
    for (const text of [colons, quotes, both, '{"a":1}', "[]", '"a:b"', '{"k" : {"j"\n:\t2}}']) {
      expect(keyBound(text), text.slice(0, 40)).toBe(sourceKeys(text));
    }
  });

  it("never counts fewer than the keys of the text, and counts them exactly unless a string holds a colon right after a quote", () => {
    const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("a:b", ":", '"', '\\":', "k"));
    const value = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: "small" }, fc.string({ maxLength: 8 }), fc.constantFrom(": x", '"":', '" :', "::::"), fc.integer(), fc.array(tie("v"), { maxLength: 4 }), fc.dictionary(key, tie("v"), { maxKeys: 4 })),
    })).v;
    fc.assert(
      fc.property(value, fc.constantFrom(0, 1, "\t"), (v, indent) => {
        const text = JSON.stringify(v, null, indent);
        const exact = sourceKeys(text);
        const bound = keyBound(text);
        expect(bound).toBeGreaterThanOrEqual(exact);
        // A colon in a string counts only right after its opening quote or an escaped quote.
        if (!strings(v).some((t) => /^\s*:|"\s*:/.test(t))) expect(bound).toBe(exact);
      }),
      { numRuns: 2000, seed: 43 },
    );
  });
});
