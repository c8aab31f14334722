import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { startScriptedServer, type ScriptedServer } from "../../../test-support/scripted-server.ts";
import { events, executions, incidents, transcriptRecords, waits } from "../src/db/schema";
import type { Host } from "../src/runtime/host";
import { startTestHost, tempDir } from "./helpers";

// max_cells_per_turn at its edge inside one reply (issue 25 item 1): a reply with more calls than
// the turn has cells left runs exactly the rest and refuses the others.

let server: ScriptedServer | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await server?.close();
  server = undefined;
});

/** A host driven by the scripted server (started here) on a chat route. */
async function drivenHost(drive: true | { maxCellsPerTurn: number }): Promise<{ host: Host; server: ScriptedServer }> {
  const scripted = (server = await startScriptedServer());
  const dataDir = tempDir();
  writeFileSync(
    join(dataDir, "routes.json"),
    JSON.stringify({ default: "scripted", routes: [{ name: "scripted", api: "chat", base_url: `${scripted.url}/v1`, model: "scripted-1", api_key_env: null, context_tokens: 200_000 }] }),
  );
  const { host, close } = await startTestHost({ dataDir, drive });
  closers.push(close);
  return { host, server: scripted };
}

describe("the input a turn reads", () => {
  // Issue 25: a mutant leaving the input unconsumed made the session loop for ever (its wait born
  // woken), caught only by the 20 s test timeout. This fails at the first request instead.
  test("is consumed by the time the model receives the request that carries it", async () => {
    const { host, server } = await drivenHost(true);
    server.push({ text: "noted" });
    await host.postInput("read me once");
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    const input = host.db.select().from(events).all().find((e) => (e.payload as { text?: string }).text === "read me once")!;
    expect(input.consumedAtMs, "the input the model was sent is still unconsumed: the session would be woken by it again and loop").not.toBeNull();
    await host.turns!.idle();
    expect(server.requests).toHaveLength(1);
    expect(host.db.select().from(waits).all().at(-1)).toMatchObject({ reason: "model_ended_turn", state: "waiting" });
  });
});

describe("max_cells_per_turn inside one reply", () => {
  test("with 2 of 3 cells left, a reply of 4 calls runs the first 2 and refuses the other 2", async () => {
    const { host, server } = await drivenHost({ maxCellsPerTurn: 3 });
    server.push({ calls: [{ code: "'c1'" }] }, { calls: [{ code: "'c2'" }, { code: "'c3'" }, { code: "'c4'" }, { code: "'c5'" }] });
    await host.postInput("go");
    await host.turns!.idle();
    const ran = host.db.select().from(executions).all().map((e) => e.code);
    expect(ran, "exactly the cells the turn had left run").toEqual(["'c1'", "'c2'", "'c3'"]);
    const records = host.db.select().from(transcriptRecords).all();
    expect(records.map((r) => r.kind)).toEqual(["input", "reply", "cell", "reply", "cell", "cell", "refusal", "refusal"]);
    const refusals = records.filter((r) => r.kind === "refusal");
    expect(refusals.map((r) => JSON.stringify(r.detail))).toEqual([expect.stringContaining("max_cells_per_turn (3)"), expect.stringContaining("max_cells_per_turn (3)")]);
  });

  test("by default (C10: 50) the 50th cell ends the turn and a 51st call is never asked for", async () => {
    const { host, server } = await drivenHost(true);
    for (let i = 1; i <= 51; i++) server.push({ calls: [{ code: `'c${i}'` }] });
    await host.postInput("go");
    await host.turns!.idle();
    expect(host.db.select().from(executions).all().map((e) => e.code), "the default max_cells_per_turn is 50").toEqual(Array.from({ length: 50 }, (_, i) => `'c${i + 1}'`));
    expect(server.pending(), "no request after the 50th cell").toBe(1);
    expect(host.db.select().from(incidents).all().filter((i) => i.kind === "model.max_cells_per_turn")).toMatchObject([{ detail: { cells: 50 } }]);
    expect(host.db.select().from(waits).all().at(-1)).toMatchObject({ reason: "max_cells_per_turn", state: "waiting" });
  });
});
