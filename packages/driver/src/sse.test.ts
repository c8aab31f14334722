import fc from "fast-check";
import { _iterSSEMessages } from "openai/core/streaming";
import { describe, expect, it } from "vitest";
import { readSseEvents, type SseEvent } from "./sse.js";

/** A body that delivers `bytes` in the pieces the cut points make (as a server's writes arrive). */
function body(bytes: Uint8Array, cuts: number[] = [], onCancel?: () => void): ReadableStream<Uint8Array> {
  const points = [...new Set(cuts.filter((c) => c > 0 && c < bytes.length))].sort((a, b) => a - b);
  const pieces = [0, ...points, bytes.length].slice(1).map((end, i, all) => bytes.slice(i === 0 ? 0 : all[i - 1]!, end));
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < pieces.length) controller.enqueue(pieces[i++]!);
      else controller.close();
    },
    cancel() {
      onCancel?.();
    },
  });
}

async function read(bytes: Uint8Array, cuts: number[] = []): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  await readSseEvents(body(bytes, cuts), (e) => events.push(e));
  return events;
}

/** What the openai SDK's own SSE reader makes of the same bytes (the reader the driver replaced for chat streams). */
async function sdkRead(bytes: Uint8Array, cuts: number[] = []): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const sse of _iterSSEMessages(new Response(body(bytes, cuts)), new AbortController())) events.push({ event: sse.event, data: sse.data });
  return events;
}

const utf8 = (text: string) => new TextEncoder().encode(text);

describe("readSseEvents", () => {
  it("reads events, comments, named events and multi-line data as the SSE framing says", async () => {
    const text = ': ping - 2026-12-02\r\n\r\ndata: {"a":1}\r\n\r\nevent: error\ndata: first\ndata:second\nid: 7\nretry: 10\n\ndata: [DONE]\r\rdata: never ended';
    expect(await read(utf8(text))).toEqual([
      { event: null, data: '{"a":1}' },
      { event: "error", data: "first\nsecond" },
      { event: null, data: "[DONE]" },
    ]);
  });

  it("gives the same events however the body is cut into pieces, even inside a character or between \\r and \\n", async () => {
    const bytes = utf8('data: {"text":"é — ✓ 𝄞"}\r\n\r\ndata: two\r\n\r\n');
    const whole = await read(bytes);
    expect(whole).toEqual([{ event: null, data: '{"text":"é — ✓ 𝄞"}' }, { event: null, data: "two" }]);
    for (let cut = 1; cut < bytes.length; cut++) expect(await read(bytes, [cut])).toEqual(whole);
  });

  it("agrees with the openai SDK's reader on any stream of lines, cut anywhere", async () => {
    const line = fc.oneof(
      fc.constantFrom("", ": ping", "data: [DONE]", "event: error", "data:", "id: 1", "retry: 5", "data: {\"choices\":[]}"),
      fc.string({ unit: "grapheme", maxLength: 12 }).map((s) => `data: ${s.replace(/[\r\n]/g, "")}`),
    );
    const ending = fc.constantFrom("\n", "\r\n", "\r");
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(line, ending), { maxLength: 14 }), fc.array(fc.nat(400), { maxLength: 6 }), async (lines, cuts) => {
        const bytes = utf8(lines.map(([l, e]) => l + e).join(""));
        expect(await read(bytes, cuts)).toEqual(await sdkRead(bytes, cuts));
      }),
      { numRuns: 300 },
    );
  });

  it("stops reading and cancels the body when the handler throws, and passes the error on", async () => {
    let cancelled = false;
    const bytes = utf8("data: 1\n\ndata: 2\n\ndata: 3\n\n");
    const seen: string[] = [];
    const reading = readSseEvents(body(bytes, [10, 20], () => (cancelled = true)), (e) => {
      seen.push(e.data);
      if (e.data === "1") throw new Error("bad chunk");
    });
    await expect(reading).rejects.toThrow("bad chunk");
    expect(seen).toEqual(["1"]);
    expect(cancelled).toBe(true);
  });

  it("ends quietly when the read is aborted (the operator's stop), and fails on any other read error", async () => {
    const failing = (error: Error) => new ReadableStream<Uint8Array>({ start: (c) => (c.enqueue(utf8("data: 1\n\n")), c.error(error)) });
    const seen: string[] = [];
    await readSseEvents(failing(new DOMException("aborted", "AbortError")), (e) => seen.push(e.data));
    await expect(readSseEvents(failing(new Error("socket hang up")), () => undefined)).rejects.toThrow("socket hang up");
  });
});
