import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { assembleMessages, buildRequestBody, callRoute, parseRoute } from "../src/index.js";

// Edges of the Anthropic stream reader that a whole-reply test never reaches.
let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => server?.close());

const sse = (events: Array<Record<string, unknown>>) => events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join("");

function anthropicRoute() {
  return parseRoute({ name: "a", api: "anthropic", base_url: server.url, model: "m-1", api_key_env: null, context_tokens: 100_000 });
}

const T = Date.UTC(2026, 11, 1, 9, 0, 0);

describe("anthropic tool_use blocks", () => {
  it("reads a tool_use with no input_json_delta as the empty object \"{}\", never an empty string", async () => {
    server.push({
      raw: sse([
        { type: "message_start", message: { id: "msg_1", type: "message", role: "assistant", model: "m-1", content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 1 } } },
        { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_1", name: "python", input: {} } },
        { type: "content_block_stop", index: 0 },
        { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 3 } },
        { type: "message_stop" },
      ]),
    });
    const route = anthropicRoute();
    const body = buildRequestBody(route, assembleMessages({ header: "h\n", frontier: null, records: [{ seq: 1, kind: "input", event: { source: "operator", received_at_ms: T, payload: { text: "go" } } }] }));
    const result = await callRoute(route, body, { key: null });
    expect(result.reply.calls).toEqual([{ id: "toolu_1", name: "python", arguments: "{}" }]);
    expect(result.reply.stop).toBe("tool_use");
  });
});
