import { describe, expect, it } from "vitest";
import { observe, pinAtStart } from "@klbr/header";
import { assembleMessages } from "./assemble.js";
import { prefixView, serializeMessages } from "./prefix.js";
import type { TranscriptRecord } from "./records.js";
import { buildRequestBody, bodyMessages } from "./wire.js";
import { parseRoute } from "./routes.js";

const T = Date.UTC(2026, 11, 1, 9, 0, 0);
const records: TranscriptRecord[] = [
  { seq: 1, kind: "input", event: { source: "operator", received_at_ms: T, payload: { text: "count the files" } } },
  { seq: 2, kind: "reply", request_id: "mr-1", reply: { text: "Looking.", calls: [{ id: "c1", name: "python", arguments: '{"code":"len(x)"}' }], stop: "tool_calls" } },
  {
    seq: 3,
    kind: "cell",
    request_id: "mr-1",
    call_id: "c1",
    result: { execution_id: "ex-1", status: "ok", output: [{ stream: "stdout", text: "hi\n" }, { stream: "result", text: "3" }], truncated_bytes: 0, error: null, ended_by: null, started_at_ms: T + 1000, ended_at_ms: T + 1420 },
  },
  { seq: 4, kind: "refusal", request_id: "mr-1", call_id: "c2", reason: "too big", at_ms: T + 2000 },
];

describe("assembleMessages", () => {
  it("frames inputs and results, replays replies as received", () => {
    const messages = assembleMessages({ header: "You are klbr.\n", frontier: null, records: records.slice(0, 3) });
    expect(messages).toEqual([
      { role: "system", text: "You are klbr.\n" },
      { role: "user", text: "[2026-12-01T09:00:00Z · operator]\ncount the files" },
      { role: "assistant", text: "Looking.", calls: [{ id: "c1", name: "python", arguments: '{"code":"len(x)"}' }] },
      { role: "tool", call_id: "c1", text: "[2026-12-01T09:00:01Z · ran 420ms]\nhi\n3\n" },
    ]);
  });

  it("states a status, an error and cut bytes, and says why a call was not run", () => {
    const messages = assembleMessages({
      header: "h",
      frontier: null,
      records: [
        { seq: 1, kind: "cell", request_id: "r", call_id: null, result: { execution_id: "e", status: "interrupted", output: [], truncated_bytes: 12, error: "the host stopped", ended_by: "host_restart", started_at_ms: T, ended_at_ms: T + 5000 } },
        records[3]!,
      ],
    });
    expect(messages[1]).toEqual({ role: "user", text: "[2026-12-01T09:00:05Z · ran 5.0s]\nthe host stopped\n[12 bytes of output were cut]\n[status: interrupted (host_restart)]\n" });
    // c2's reply is not in this request: its refusal reads as a user message, not an orphan tool result.
    expect(messages[2]).toEqual({ role: "user", text: "[2026-12-01T09:00:02Z]\nnot run: too big\n" });
  });

  it("puts the frontier block after the header and renders observations where they were noticed", () => {
    const pin = pinAtStart([{ name: "contract", text: "be brief\n" }], T);
    const revision = observe([pin], [{ name: "contract", text: "be brief\nbe kind\n" }], { origin: "host" }, T + 60_000)!;
    const messages = assembleMessages({
      header: pin.text,
      frontier: { frontier_id: "f1", covers_through: 9, block: "## open waits\n(none)\n", created_at_ms: T },
      records: [{ seq: 10, kind: "observation", revision }],
    });
    expect(messages[1]).toEqual({ role: "user", text: "[2026-12-01T09:00:00Z · frontier]\n## open waits\n(none)\n" });
    expect((messages[2] as { text: string }).text).toMatch(/^\[2026-12-01T09:01:00Z · instructions changed for this runtime · changed outside this transcript\]\n/);
  });

  it("renders a turn the operator stopped as a user message the next request reads", () => {
    const messages = assembleMessages({ header: "h", frontier: null, records: [{ seq: 1, kind: "turn_end", reason: "operator_interrupted", at_ms: Date.UTC(2026, 11, 1, 9) }] });
    expect(messages[1]).toEqual({
      role: "user",
      text: "[2026-12-01T09:00:00Z · turn ended: operator_interrupted]\nthe operator stopped this turn (a reply being written was discarded; a running cell was interrupted)\n",
    });
  });

  it("keeps each request's serialized messages a byte-prefix of the next (chat, responses, fence, anthropic without its moving marker)", () => {
    for (const [api, cells] of [["chat", "tool"], ["responses", "tool"], ["chat", "fence"], ["anthropic", "tool"]] as const) {
      const route = parseRoute({ name: "r", api, base_url: "http://x/v1", model: "m", api_key_env: null, context_tokens: 1000, cells });
      let before = "";
      for (let n = 0; n <= records.length; n++) {
        const now = serializeMessages(bodyMessages(prefixView(api, buildRequestBody(route, assembleMessages({ header: "h", frontier: null, records: records.slice(0, n) })))));
        expect(now.startsWith(before)).toBe(true);
        before = now;
      }
    }
  });

  it("marks anthropic cache breakpoints on the header and the last message only", () => {
    const route = parseRoute({ name: "a", api: "anthropic", base_url: "http://x", model: "claude", api_key_env: null, context_tokens: 1000 });
    const body = buildRequestBody(route, assembleMessages({ header: "h", frontier: null, records: records.slice(0, 3) }));
    expect(body.system).toEqual([{ type: "text", text: "h", cache_control: { type: "ephemeral" } }]);
    const messages = body.messages as Array<{ content: Array<Record<string, unknown>> }>;
    expect(messages.map((m) => m.content.some((b) => b.cache_control !== undefined))).toEqual([false, false, true]);
    // The prefix view drops the moving marker only: the header's stays, the body is otherwise the same.
    const view = prefixView("anthropic", body);
    expect((view.messages as typeof messages).map((m) => m.content.some((b) => b.cache_control !== undefined))).toEqual([false, false, false]);
    expect(view.system).toEqual(body.system);
    expect(JSON.stringify(view).length).toBe(JSON.stringify(body).length - ',"cache_control":{"type":"ephemeral"}'.length);
    expect(messages[1]!.content[1]).toEqual({ type: "tool_use", id: "c1", name: "python", input: { code: "len(x)" } });
    expect(body.max_tokens).toBe(4096);
  });

  it("strips cache options a route does not accept and keeps those it does", () => {
    const options = { temperature: 0, prompt_cache_retention: "24h", prompt_cache_options: { k: 1 } };
    const strict = parseRoute({ name: "a", api: "chat", base_url: "http://x/v1", model: "m", api_key_env: null, context_tokens: 1000, options });
    expect(Object.keys(buildRequestBody(strict, []))).toEqual(["model", "temperature", "tools", "stream", "stream_options", "messages"]);
    const open = { ...strict, accepts: { prompt_cache_retention: true, prompt_cache_options: false } };
    expect(buildRequestBody(open, []).prompt_cache_retention).toBe("24h");
    expect(buildRequestBody(open, []).prompt_cache_options).toBeUndefined();
  });
});
