import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Worker } from "../src/index.js";
import { startPython } from "./helpers.js";

const HANDLERS = `
import asyncio, time
from klbr.sdk import Allow, Hold, Wake

def attention(request, context):
    return Wake(priority=request.event_id % 101)

async def delivery(request, context):
    if request.text == "raise":
        raise RuntimeError("handler exploded")
    if request.text == "bad":
        return "not a decision"
    if request.text == "block":
        time.sleep(30)
    if request.text == "async":
        await asyncio.sleep(0.01)
        return Allow()
    return Hold(reason=request.text)
`;

function makeSource(): string {
  const root = join(mkdtempSync(join(tmpdir(), "klbr-src-")), "mysrc");
  mkdirSync(root);
  writeFileSync(join(root, "manifest.json"), JSON.stringify({ version: 1, hooks: { "attention.plan": "mysrc.h:attention", "delivery.review": "mysrc.h:delivery" } }));
  writeFileSync(join(root, "h.py"), HANDLERS);
  return root;
}

const review = (text: string) => ({ effect_id: "e-1", destination: "operator" as const, text });

describe("the real Python hooks worker", () => {
  let worker: Worker;
  const source = makeSource();
  beforeAll(async () => {
    worker = await startPython({ role: "hooks", sourceDir: source });
  });
  afterAll(async () => {
    await worker?.shutdown();
    rmSync(dirname(source), { recursive: true, force: true });
  });

  it("says hello with the source digest and both slots", () => {
    expect(worker.hello.revision).toMatch(/^[0-9a-f]{64}$/);
    expect([...worker.hello.slots].sort()).toEqual(["attention.plan", "delivery.review"]);
  });

  it("invokes sync and async handlers and validates their decisions", async () => {
    expect(await worker.invoke("attention.plan", { event_id: 42, source: "operator", received_at_ms: 1 })).toMatchObject({
      kind: "hook",
      value: { action: "wake", priority: 42 },
    });
    expect(await worker.invoke("delivery.review", review("async"))).toMatchObject({ kind: "hook", value: { action: "allow" } });
    expect(await worker.invoke("delivery.review", review("too loud"))).toMatchObject({ kind: "hook", value: { action: "hold", reason: "too loud" } });
  });

  it("a handler that raises or returns the wrong type fails that invoke only", async () => {
    const raised = await worker.invoke("delivery.review", review("raise"));
    expect(raised).toMatchObject({ kind: "failed", source: "worker" });
    expect(raised.kind === "failed" && raised.error).toContain("handler exploded");
    expect(await worker.invoke("delivery.review", review("bad"))).toMatchObject({ kind: "failed", source: "worker" });
    expect(worker.state).toBe("ready");
    expect(await worker.invoke("delivery.review", review("async"))).toMatchObject({ kind: "hook" });
  });

  it("a hook worker that hello'd a different revision than expected is refused", async () => {
    await expect(startPython({ role: "hooks", sourceDir: source, expect: { revision: "0".repeat(64) } })).rejects.toMatchObject({ code: "WORKER_BAD_HELLO" });
  });

  it("a handler that overruns the budget invalidates the generation", async () => {
    const own = await startPython({ role: "hooks", sourceDir: source, invokeBudgetMs: 400 });
    const blocked = own.invoke("delivery.review", review("block"));
    const queued = own.invoke("delivery.review", review("async"));
    expect(await blocked).toMatchObject({ kind: "failed", source: "host", reason: "hook_timeout" });
    expect(await queued).toMatchObject({ kind: "failed", reason: "hook_timeout" });
    expect(await own.exited).toMatchObject({ reason: "hook_timeout" });
  });
});
