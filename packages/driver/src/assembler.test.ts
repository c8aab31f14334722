import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assembleMessages } from "./assemble.js";
import { RequestAssembler } from "./assembler.js";
import { bodyDigest, prefixView, serializeBody, sharedPrefixBytes } from "./prefix.js";
import type { FrontierRef, TranscriptRecord } from "./records.js";
import { parseRoute } from "./routes.js";
import { buildRequestBody } from "./wire.js";

const T = Date.UTC(2026, 11, 1);

function records(n: number, start = 1): TranscriptRecord[] {
  const out: TranscriptRecord[] = [];
  let seq = start;
  for (let i = 0; i < n; i++) {
    out.push({ seq: seq++, kind: "input", event: { source: "operator", received_at_ms: T + i, payload: { text: `step ${i} "quoted" é\n` } } });
    const calls = i % 3 === 0 ? [] : [{ id: `c${i}`, name: "python", arguments: JSON.stringify({ code: `x = ${i}` }) }];
    out.push({ seq: seq++, kind: "reply", request_id: `r${i}`, reply: { text: i % 2 ? "" : `thinking ${i}`, calls, stop: null } });
    for (const c of calls) {
      out.push({ seq: seq++, kind: "cell", request_id: `r${i}`, call_id: c.id, result: { execution_id: `e${i}`, status: "ok", output: [{ stream: "result", text: String(i) }], truncated_bytes: 0, error: null, ended_by: null, started_at_ms: T, ended_at_ms: T + i } });
    }
  }
  return out;
}

describe("RequestAssembler", () => {
  it.each(["chat", "responses", "anthropic"] as const)("writes the same bytes as the pure assembly, appended in any split (%s)", (api) => {
    const route = parseRoute({ name: "r", api, base_url: "http://x/v1", model: "m", api_key_env: null, context_tokens: 1000, options: { temperature: 0.2 } });
    const all = records(12);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: all.length }), { maxLength: 6 }), fc.boolean(), (cuts, withFrontier) => {
        const frontier: FrontierRef | null = withFrontier ? { frontier_id: "f", covers_through: 0, block: "## open waits\n(none)\n", created_at_ms: T } : null;
        const assembler = new RequestAssembler(route, "header\n", frontier);
        let at = 0;
        for (const cut of [...cuts].sort((a, b) => a - b).concat(all.length)) {
          assembler.append(all.slice(at, cut));
          at = Math.max(at, cut);
          const expected = buildRequestBody(route, assembleMessages({ header: "header\n", frontier, records: all.slice(0, at) }));
          const body = assembler.body();
          expect(body.text).toBe(serializeBody(expected));
          expect(serializeBody(body.object)).toBe(body.text);
          expect(body.prefixText).toBe(serializeBody(prefixView(api, expected)));
        }
      }),
      { numRuns: 40 },
    );
  });

  it.each(["chat", "responses", "anthropic"] as const)("gives each body's size, digest and shared prefix exactly as the general measures do (%s)", (api) => {
    const route = parseRoute({ name: "r", api, base_url: "http://x/v1", model: "m", api_key_env: null, context_tokens: 1000, cells: "tool", options: { temperature: 0.2 } });
    const all = records(12);
    // Each step: appended records, how many bodies to ask for, and which earlier text to measure against.
    const step = fc.record({ cut: fc.integer({ min: 0, max: all.length }), asks: fc.integer({ min: 1, max: 2 }), against: fc.constantFrom("last", "older", "other", "null", "edited") });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 8 }), fc.boolean(), fc.string({ unit: "grapheme", maxLength: 12 }), (steps, withFrontier, header) => {
        const frontier: FrontierRef | null = withFrontier ? { frontier_id: "f", covers_through: 0, block: "## open waits\n(none) é\n", created_at_ms: T } : null;
        const assembler = new RequestAssembler(route, `header ${header}\n`, frontier);
        const other = new RequestAssembler(route, "another header", null).body().prefixText;
        const texts: string[] = [];
        let at = 0;
        for (const s of steps.sort((a, b) => a.cut - b.cut)) {
          assembler.append(all.slice(at, s.cut));
          at = Math.max(at, s.cut);
          let body = assembler.body();
          for (let i = 1; i < s.asks; i++) body = assembler.body();
          expect(body.bytes).toBe(Buffer.byteLength(body.text, "utf8"));
          expect(body.digest).toBe(bodyDigest(body.text));
          const previous = { last: texts.at(-1) ?? null, older: texts.at(-2) ?? null, other, null: null, edited: texts.at(-1)?.replace(/.$/, "x") ?? null }[s.against];
          expect(assembler.sharedPrefixBytes(previous, body)).toBe(sharedPrefixBytes(previous, body.prefixText));
          texts.push(body.prefixText);
        }
      }),
      { numRuns: 60 },
    );
  });

  it("measures a stale body (one given before the last append) by its text, not by the assembler's state", () => {
    const route = parseRoute({ name: "r", api: "chat", base_url: "http://x/v1", model: "m", api_key_env: null, context_tokens: 1000 });
    const assembler = new RequestAssembler(route, "h", null);
    const first = assembler.body();
    assembler.append(records(1));
    const second = assembler.body();
    expect(assembler.sharedPrefixBytes(second.prefixText, first)).toBe(sharedPrefixBytes(second.prefixText, first.prefixText));
    expect(assembler.sharedPrefixBytes(first.prefixText, second)).toBe(Buffer.byteLength(first.prefixText) - 2);
  });

  it("refuses a record that is not after the last one", () => {
    const route = parseRoute({ name: "r", api: "chat", base_url: "http://x/v1", model: "m", api_key_env: null, context_tokens: 1000 });
    const assembler = new RequestAssembler(route, "h", null);
    assembler.append(records(1));
    expect(() => assembler.append(records(1))).toThrow(expect.objectContaining({ code: "DRIVER_INVALID_RECORD" }));
  });
});
