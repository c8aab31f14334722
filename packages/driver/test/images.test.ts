// C20 for model turns: the result frame reads each display's text and an image line per image;
// a route declared "images": true also gets each image's bytes as an image part of the same
// result in its API's shape (chat: a user message of image_url data URLs after the reply's tool
// results; Responses: input_image parts of the function_call_output; Anthropic: image blocks in
// the tool_result), and the prefix stays byte-stable request after request. A route without
// "images" never sends image bytes. Each body goes to the scripted server over the real SDK client.
import { createHash } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { assembleMessages, buildRequestBody, callRoute, parseRoute, RequestAssembler, renderCellResult, serializeBody, type CellResult, type Route, type TranscriptRecord } from "../src/index.js";

let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => server?.close());

const T = Date.UTC(2026, 11, 1, 9, 0, 0);
/** Bytes that start like a PNG: the driver never decodes them, it carries them. */
const png = (fill: number) => Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(40, fill)]);
const image = (bytes: Buffer, withBytes: boolean) => ({
  mime: "image/png" as const,
  digest: `sha256:${createHash("sha256").update(bytes).digest("hex")}`,
  width: 640,
  height: 480,
  bytes: 23 * 1024,
  ...(withBytes ? { base64: bytes.toString("base64") } : {}),
});

function route(api: Route["api"], images: boolean): Route {
  const base_url = api === "anthropic" ? server.url : `${server.url}/v1`;
  return parseRoute({ name: "scripted", api, base_url, model: "m-1", api_key_env: null, context_tokens: 100_000, ...(images ? { images: true } : {}) });
}

function cell(id: string, at: number, fill: number, withBytes: boolean): CellResult {
  return {
    execution_id: id,
    status: "ok",
    output: [{ stream: "stdout", text: "plotted\n" }],
    truncated_bytes: 0,
    error: null,
    ended_by: null,
    started_at_ms: at,
    ended_at_ms: at + 420,
    displays: [{ text: "<Figure size 640x480 with 1 Axes>", images: [image(png(fill), withBytes)] }, { text: "| a |\n|---|", images: [] }],
    displays_dropped: 0,
  };
}

/** Two turns: an input, a reply with one call, its cell with a plot; then another reply and cell. */
function records(withBytes: boolean): TranscriptRecord[] {
  return [
    { seq: 1, kind: "input", event: { source: "operator", received_at_ms: T, payload: { text: "plot it" } } },
    { seq: 2, kind: "reply", request_id: "mr-1", reply: { text: "", calls: [{ id: "call-1", name: "python", arguments: '{"code":"plt.show()"}' }], stop: "tool_calls" } },
    { seq: 3, kind: "cell", request_id: "mr-1", call_id: "call-1", result: cell("ex-1", T + 1000, 1, withBytes) },
    { seq: 4, kind: "reply", request_id: "mr-2", reply: { text: "again", calls: [{ id: "call-2", name: "python", arguments: '{"code":"plt.show()"}' }], stop: "tool_calls" } },
    { seq: 5, kind: "cell", request_id: "mr-2", call_id: "call-2", result: cell("ex-2", T + 5000, 2, withBytes) },
  ];
}

describe("the result frame's display lines (C20)", () => {
  it("each display's text, then an image line per image, after the output", () => {
    const text = renderCellResult(cell("ex-1", T, 1, false));
    expect(text).toBe(
      `[2026-12-01T09:00:00Z · ran 420ms]\nplotted\n<Figure size 640x480 with 1 Axes>\n[image/png 640x480 · 23 KiB · sha256:${image(png(1), false).digest.slice(7, 19)}]\n| a |\n|---|\n`,
    );
  });
  it("what a display left out, and displays past 32", () => {
    const result: CellResult = { ...cell("ex-1", T, 1, false), displays: [{ text: "<Big>", images: [], omitted: { "image/png": 5 * 1024 * 1024 } }], displays_dropped: 968 };
    expect(renderCellResult(result)).toContain("<Big>\n[image/png not shown: 5.0 MiB is past the 1 MiB a display carries]\n[968 more displays were not shown: a cell shows at most 32]\n");
  });
});

const b64 = (fill: number) => png(fill).toString("base64");

/** Where each API puts a result's image bytes. */
const SHAPES: Record<Route["api"], (messages: any[]) => unknown[]> = {
  chat: (m) => m.filter((x) => x.role === "user" && Array.isArray(x.content)).flatMap((x) => x.content),
  responses: (m) => m.filter((x) => x.type === "function_call_output" && Array.isArray(x.output)).flatMap((x) => x.output.filter((p: any) => p.type === "input_image")),
  anthropic: (m) => m.flatMap((x) => x.content).filter((b: any) => b.type === "tool_result" && Array.isArray(b.content)).flatMap((b: any) => b.content.filter((p: any) => p.type === "image")),
};
const EXPECTED: Record<Route["api"], (fill: number) => unknown> = {
  chat: (f) => ({ type: "image_url", image_url: { url: `data:image/png;base64,${b64(f)}` } }),
  responses: (f) => ({ type: "input_image", detail: "auto", image_url: `data:image/png;base64,${b64(f)}` }),
  anthropic: (f) => ({ type: "image", source: { type: "base64", media_type: "image/png", data: b64(f) } }),
};

describe.each(["chat", "responses", "anthropic"] as const)("%s", (api) => {
  it("a route with images: each image in the API's shape, the assembler's bytes equal the pure assembly's, the prefix byte-stable, sent as is", async () => {
    const r = route(api, true);
    const all = records(true);
    const assembler = new RequestAssembler(r, "You are klbr.\n", null);
    assembler.append(all.slice(0, 3));
    const first = assembler.body();
    expect(first.text).toBe(serializeBody(buildRequestBody(r, assembleMessages({ header: "You are klbr.\n", frontier: null, records: all.slice(0, 3) }))));
    assembler.append(all.slice(3));
    const second = assembler.body();
    expect(second.text).toBe(serializeBody(buildRequestBody(r, assembleMessages({ header: "You are klbr.\n", frontier: null, records: all }))));
    // Byte-stable: the later body extends the earlier one (up to its closing brackets).
    expect(second.prefixText.startsWith(first.prefixText.slice(0, -2))).toBe(true);
    expect(assembler.sharedPrefixBytes(first.prefixText, second)).toBe(Buffer.byteLength(first.prefixText) - 2);
    const messages = JSON.parse(second.text)[api === "responses" ? "input" : "messages"];
    expect(SHAPES[api](messages)).toEqual([EXPECTED[api](1), EXPECTED[api](2)]);
    if (api === "chat") {
      // Tool messages carry text; the images follow the reply's results, before the next reply.
      const roles = messages.map((m: any) => (Array.isArray(m.content) ? "images" : m.role));
      expect(roles).toEqual(["system", "user", "assistant", "tool", "images", "assistant", "tool", "images"]);
    }
    // The image line is in the text too: a model that reads no image still reads what was shown.
    expect(second.text).toContain("[image/png 640x480 · 23 KiB · sha256:");
    server.push({ text: "one" }, { text: "two" });
    await callRoute(r, first.object, { key: null, text: first.text });
    await callRoute(r, second.object, { key: null, text: second.text });
    expect(server.requests.map((q) => q.body)).toEqual([first.text, second.text]);
    // The server's own measure: the second request repeats the first up to its end (Anthropic: up to
    // the first body's moving cache marker, on its last block).
    const upTo = api === "anthropic" ? Buffer.byteLength(first.text.slice(0, first.text.lastIndexOf(',"cache_control"'))) : Buffer.byteLength(first.text) - 2;
    expect(server.requests[1]!.shared_prefix_bytes).toBeGreaterThanOrEqual(upTo);
  });

  it("a route without images never gets image bytes, even when the records carry them", async () => {
    const r = route(api, false);
    const assembler = new RequestAssembler(r, "You are klbr.\n", null);
    assembler.append(records(true));
    const body = assembler.body();
    expect(body.text).toBe(serializeBody(buildRequestBody(r, assembleMessages({ header: "You are klbr.\n", frontier: null, records: records(true) }))));
    for (const fill of [1, 2]) expect(body.text).not.toContain(b64(fill));
    expect(body.text).not.toContain("data:image");
    expect(body.text).not.toMatch(/"(image_url|input_image|image)"/);
    expect(body.text).toContain("[image/png 640x480 · 23 KiB · sha256:");
    // The same as a body built from records without bytes.
    const plain = new RequestAssembler(r, "You are klbr.\n", null);
    plain.append(records(false));
    expect(plain.body().text).toBe(body.text);
    server.push({ text: "one" });
    await callRoute(r, body.object, { key: null, text: body.text });
    expect(server.requests[0]!.body).not.toContain(b64(1));
  });

  it("a result read as a user message (its call not in the request) carries its images in its own content", () => {
    const r = route(api, true);
    const lone: TranscriptRecord[] = [{ seq: 1, kind: "cell", request_id: "mr-0", call_id: "call-gone", result: cell("ex-0", T, 3, true) }];
    const body = buildRequestBody(r, assembleMessages({ header: "h", frontier: null, records: lone }));
    const messages = (body.messages ?? body.input) as any[];
    const user = messages.find((m) => m.role === "user")!;
    const parts = user.content as any[];
    expect(parts[0]).toMatchObject({ type: api === "chat" ? "text" : api === "responses" ? "input_text" : "text" });
    expect(parts.slice(1).map((p) => ({ ...p, cache_control: undefined }))).toEqual([{ ...(EXPECTED[api](3) as object), cache_control: undefined }]);
  });
});

describe("routes.json images", () => {
  it("is a boolean, absent by default", () => {
    expect(parseRoute({ name: "r", api: "chat", base_url: "http://x", model: "m", context_tokens: 1000 }).images).toBeUndefined();
    expect(parseRoute({ name: "r", api: "chat", base_url: "http://x", model: "m", context_tokens: 1000, images: true }).images).toBe(true);
    expect(() => parseRoute({ name: "r", api: "chat", base_url: "http://x", model: "m", context_tokens: 1000, images: "yes" })).toThrow(/images must be a boolean/);
  });
});
