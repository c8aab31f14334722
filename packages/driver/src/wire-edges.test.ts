import { describe, expect, it } from "vitest";
import { parseRoute, type CellsMode, type RouteApi } from "./routes.js";
import type { Message } from "./messages.js";
import { anthropicMessages, buildRequestBody, chatMessages, responsesInput } from "./wire.js";

// The body's fields outside the messages, written out in full: what each API is offered as the
// python tool, and that a fence route is offered none.
const description =
  "Run Python in this session's persistent workbench (top-level await allowed; `runtime` is the host API). The result is the cell's output, error and status.";
const parameters = {
  type: "object",
  properties: { code: { type: "string", description: "Python source of one cell" } },
  required: ["code"],
  additionalProperties: false,
};
const routeOf = (api: RouteApi, cells: CellsMode) =>
  parseRoute({ name: "r", api, base_url: "http://127.0.0.1:1/v1", model: "m", api_key_env: null, context_tokens: 1000, cells, options: { temperature: 0.2 } });
const system = { role: "system" as const, text: "h" };

describe("buildRequestBody outside the messages", () => {
  it("chat: python as a function tool, then stream with usage, then the messages", () => {
    const body = buildRequestBody(routeOf("chat", "tool"), [system]);
    expect(body).toEqual({
      model: "m",
      temperature: 0.2,
      tools: [{ type: "function", function: { name: "python", description, parameters } }],
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "system", content: "h" }],
    });
    expect(Object.keys(body)).toEqual(["model", "temperature", "tools", "stream", "stream_options", "messages"]);
  });

  it("responses: python as a non-strict function tool, then stream, then the input", () => {
    const body = buildRequestBody(routeOf("responses", "tool"), [system]);
    expect(body).toEqual({
      model: "m",
      temperature: 0.2,
      tools: [{ type: "function", name: "python", description, parameters, strict: false }],
      stream: true,
      input: [{ role: "system", content: "h" }],
    });
    expect(Object.keys(body)).toEqual(["model", "temperature", "tools", "stream", "input"]);
  });

  it("anthropic: python with an input_schema, the default max_tokens, a marked system block, then the messages", () => {
    const body = buildRequestBody(routeOf("anthropic", "tool"), [system]);
    expect(body).toEqual({
      model: "m",
      max_tokens: 4096,
      temperature: 0.2,
      tools: [{ name: "python", description, input_schema: parameters }],
      stream: true,
      system: [{ type: "text", text: "h", cache_control: { type: "ephemeral" } }],
      messages: [],
    });
    expect(Object.keys(body)).toEqual(["model", "max_tokens", "temperature", "tools", "stream", "system", "messages"]);
  });

  it.each(["chat", "responses", "anthropic"] as const)("%s: a fence route is offered no tool", (api) => {
    const tool = buildRequestBody(routeOf(api, "tool"), [system]);
    const fence = buildRequestBody(routeOf(api, "fence"), [system]);
    expect(fence).not.toHaveProperty("tools");
    const { tools: _, ...rest } = tool;
    expect(fence).toEqual(rest);
  });
});

// One conversation in the neutral form, and each API's wire shape of it written out in full.
const call = (id: string, code: string) => ({ id, name: "python", arguments: JSON.stringify({ code }) });
const conversation: Message[] = [
  { role: "system", text: "h" },
  { role: "user", text: "u" },
  { role: "assistant", text: "plain", calls: [] },
  { role: "assistant", text: "", calls: [] },
  { role: "assistant", text: "look", calls: [call("c1", "1")] },
  { role: "tool", call_id: "c1", text: "r1" },
  { role: "assistant", text: "", calls: [call("c2", "2"), { id: "c3", name: "python", arguments: "[3]" }] },
  { role: "tool", call_id: "c2", text: "r2" },
  { role: "tool", call_id: "c3", text: "r3" },
];

describe("each API's wire shape of the messages", () => {
  it("chat: roles as they are, calls as tool_calls beside the text (\"\" when none), results as tool messages", () => {
    expect(chatMessages(conversation)).toEqual([
      { role: "system", content: "h" },
      { role: "user", content: "u" },
      { role: "assistant", content: "plain" },
      { role: "assistant", content: "" },
      { role: "assistant", content: "look", tool_calls: [{ id: "c1", type: "function", function: { name: "python", arguments: '{"code":"1"}' } }] },
      { role: "tool", tool_call_id: "c1", content: "r1" },
      {
        role: "assistant",
        content: "",
        tool_calls: [
          { id: "c2", type: "function", function: { name: "python", arguments: '{"code":"2"}' } },
          { id: "c3", type: "function", function: { name: "python", arguments: "[3]" } },
        ],
      },
      { role: "tool", tool_call_id: "c2", content: "r2" },
      { role: "tool", tool_call_id: "c3", content: "r3" },
    ]);
  });

  it("responses: roles as they are, an assistant's text only when it has some, each call and each output an item", () => {
    expect(responsesInput(conversation)).toEqual([
      { role: "system", content: "h" },
      { role: "user", content: "u" },
      { role: "assistant", content: "plain" },
      { role: "assistant", content: "look" },
      { type: "function_call", call_id: "c1", name: "python", arguments: '{"code":"1"}' },
      { type: "function_call_output", call_id: "c1", output: "r1" },
      { type: "function_call", call_id: "c2", name: "python", arguments: '{"code":"2"}' },
      { type: "function_call", call_id: "c3", name: "python", arguments: "[3]" },
      { type: "function_call_output", call_id: "c2", output: "r2" },
      { type: "function_call_output", call_id: "c3", output: "r3" },
    ]);
  });

  it("anthropic: system and user as user text blocks, calls as tool_use blocks after any text, results as tool_result blocks", () => {
    expect(anthropicMessages(conversation)).toEqual([
      { role: "user", content: [{ type: "text", text: "h" }] },
      { role: "user", content: [{ type: "text", text: "u" }] },
      { role: "assistant", content: [{ type: "text", text: "plain" }] },
      { role: "assistant", content: [{ type: "text", text: "" }] },
      { role: "assistant", content: [{ type: "text", text: "look" }, { type: "tool_use", id: "c1", name: "python", input: { code: "1" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "r1" }] },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "c2", name: "python", input: { code: "2" } },
          { type: "tool_use", id: "c3", name: "python", input: { unparsed_arguments: "[3]" } },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c2", content: "r2" }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c3", content: "r3" }] },
    ]);
  });

  it("anthropic replays arguments that are JSON but not an object as what they were", () => {
    const replayed = (args: string) => (anthropicMessages([{ role: "assistant", text: "", calls: [{ id: "c", name: "python", arguments: args }] }])[0]!.content[0] as { input: unknown }).input;
    for (const args of ["null", "5", '"x"', "true", "[]"]) expect(replayed(args)).toEqual({ unparsed_arguments: args });
    expect(replayed('{"code":"1"}')).toEqual({ code: "1" });
  });

  it("bodies put the messages last in each API's shape; an anthropic body marks its last block only", () => {
    expect(buildRequestBody(routeOf("chat", "fence"), conversation).messages).toEqual(chatMessages(conversation));
    expect(buildRequestBody(routeOf("responses", "fence"), conversation).input).toEqual(responsesInput(conversation));
    const anthropic = buildRequestBody(routeOf("anthropic", "fence"), conversation);
    const expected = anthropicMessages(conversation.slice(1));
    const last = expected.at(-1)!;
    last.content = [{ ...last.content[0]!, cache_control: { type: "ephemeral" } }];
    expect(anthropic.messages).toEqual(expected);
    expect(buildRequestBody(routeOf("anthropic", "fence"), [system]).messages).toEqual([]);
  });
});
