// Transcript records and routes for the fold tests (src/fold.test.ts, src/fold-edges.test.ts).
import type { TranscriptRecord } from "../../src/records.js";
import { parseRoute, type Route } from "../../src/routes.js";

/** Builders of input, reply and cell records, every time in them `at` (ms since the epoch). */
export function recordsAt(at: number) {
  return {
    /** An operator's input saying `text`. */
    input: (seq: number, text: string): TranscriptRecord => ({ seq, kind: "input", event: { source: "operator", received_at_ms: at, payload: { text } } }),
    /** A reply with no text and one python call, `call`. */
    reply: (seq: number, call: string): TranscriptRecord => ({ seq, kind: "reply", request_id: `r${seq}`, reply: { text: "", calls: [{ id: call, name: "python", arguments: '{"code":"1"}' }], stop: null } }),
    /** The ok cell answering `call`, its stdout `out`. */
    cell: (seq: number, call: string, out: string): TranscriptRecord => ({
      seq,
      kind: "cell",
      request_id: "r",
      call_id: call,
      result: { execution_id: `e${seq}`, status: "ok", output: [{ stream: "stdout", text: out }], truncated_bytes: 0, error: null, ended_by: null, started_at_ms: at, ended_at_ms: at + 1 },
    }),
  };
}

/** A route on `api` with `context_tokens` of context. It runs parseRoute: call it in tests, not while vitest collects them. */
export const routeOf = (context_tokens: number, api: Route["api"] = "chat"): Route =>
  parseRoute({ name: "r", api, base_url: "http://127.0.0.1:1/v1", model: "m", api_key_env: null, context_tokens, options: { temperature: 0.2 } });
