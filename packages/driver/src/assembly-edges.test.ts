import { describe, expect, it } from "vitest";
import { observe, pinAtStart, renderObservation } from "@klbr/header";
import { assembleMessages } from "./assemble.js";
import { cellsOf } from "./cells.js";
import type { TranscriptRecord } from "./records.js";
import { parseRoute } from "./routes.js";
import { buildRequestBody } from "./wire.js";

// Edges of assembly a whole-transcript test does not reach: an observation's role, a record kind
// the driver does not know, and calls whose arguments are empty or not an object.
const T = Date.UTC(2026, 11, 1, 9, 0, 0);
const anthropic = () => parseRoute({ name: "a", api: "anthropic", base_url: "http://127.0.0.1:1", model: "m", api_key_env: null, context_tokens: 1000 });
const reply = (args: string): TranscriptRecord => ({ seq: 1, kind: "reply", request_id: "r1", reply: { text: "", calls: [{ id: "c1", name: "python", arguments: args }], stop: "tool_calls" } });

describe("assembleMessages edges", () => {
  it("gives an observation to the model as a user message", () => {
    const pin = pinAtStart([{ name: "contract", text: "be brief\n" }], T);
    const revision = observe([pin], [{ name: "contract", text: "be kind\n" }], { origin: "host" }, T + 1000)!;
    const messages = assembleMessages({ header: pin.text, frontier: null, records: [{ seq: 1, kind: "observation", revision }] });
    expect(messages[1]).toEqual({ role: "user", text: renderObservation(revision) });
  });

  it("refuses a record kind it does not know with DRIVER_INVALID_RECORD naming the kind", () => {
    const record = { seq: 1, kind: "memo", text: "x" } as unknown as TranscriptRecord;
    expect(() => assembleMessages({ header: "h", frontier: null, records: [record] })).toThrow(
      expect.objectContaining({ code: "DRIVER_INVALID_RECORD", message: 'unknown transcript record kind "memo"' }),
    );
  });
});

describe("anthropic replay of a call's arguments", () => {
  const replayed = (args: string) => {
    const body = buildRequestBody(anthropic(), assembleMessages({ header: "h", frontier: null, records: [reply(args)] }));
    return (body.messages as Array<{ content: Array<Record<string, unknown>> }>)[0]!.content[0]!.input;
  };

  it("replays empty arguments as the empty object", () => {
    expect(replayed("")).toEqual({});
  });

  it("replays arguments that are not a JSON object as what they were", () => {
    expect(replayed("[1]")).toEqual({ unparsed_arguments: "[1]" });
    expect(replayed("{not json")).toEqual({ unparsed_arguments: "{not json" });
  });

  it("writes an empty system block when the messages carry no header", () => {
    expect(buildRequestBody(anthropic(), []).system).toEqual([{ type: "text", text: "", cache_control: { type: "ephemeral" } }]);
  });
});

describe("cellsOf with empty arguments", () => {
  it("reads empty arguments as {} and refuses them for the missing code, not as invalid JSON", () => {
    expect(cellsOf({ text: "", calls: [{ id: "c1", name: "python", arguments: "" }], stop: null }, "tool")).toEqual([
      { call_id: "c1", refused: 'the arguments must be a JSON object with one string field "code"' },
    ]);
  });
});
