// callRoute keeps one SDK client per route and key (made once, not per call): what each call
// reports must still be its own (issue 27's host overhead per step).
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { assembleMessages, buildRequestBody, callRoute, parseRoute, serializeBody, type Route } from "../src/index.js";

let server: ScriptedServer;
beforeEach(async () => {
  server = await startScriptedServer();
});
afterEach(async () => server?.close());

function route(api: Route["api"]): Route {
  return parseRoute({ name: "shared", api, base_url: api === "anthropic" ? server.url : `${server.url}/v1`, model: "m-1", api_key_env: null, context_tokens: 100_000 });
}

const T = Date.UTC(2026, 11, 1, 9, 0, 0);
const body = (r: Route, text: string) =>
  buildRequestBody(r, assembleMessages({ header: "You are klbr.\n", frontier: null, records: [{ seq: 1, kind: "input", event: { source: "operator", received_at_ms: T, payload: { text } } }] }));

describe.each(["chat", "responses", "anthropic"] as const)("callRoute's shared %s client", (api) => {
  it("counts each call's own retries and keeps each call's own body when two calls run at once", async () => {
    // Whichever request arrives first is refused once; the other is answered at once.
    server.push({ status: 429 }, { text: "one" }, { text: "two" });
    const r = route(api);
    const a = body(r, "first call");
    const b = body(r, "second call, a longer body than the first");
    const [ra, rb] = await Promise.all([callRoute(r, a, { key: null }), callRoute(r, b, { key: null })]);
    expect([ra.retries, rb.retries].sort()).toEqual([0, 1]);
    expect(ra.sent).toBe(serializeBody(a));
    expect(rb.sent).toBe(serializeBody(b));
    expect(server.requests).toHaveLength(3);
  });

  it("sends the key read for this call, not the one an earlier call on the route read", async () => {
    server.push({ text: "a" }, { text: "b" });
    const r = route(api);
    await callRoute(r, body(r, "x"), { key: "sk-first" });
    await callRoute(r, body(r, "x"), { key: "sk-second" });
    // Whichever header the SDK carries the key in (authorization, x-api-key).
    const headers = (i: number) => JSON.stringify(server.requests[i]!.headers);
    expect(headers(0)).toContain("sk-first");
    expect(headers(1)).toContain("sk-second");
    expect(headers(1)).not.toContain("sk-first");
  });
});
