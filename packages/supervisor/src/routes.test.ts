import { describe, expect, it } from "vitest";
import { CellSlot } from "./cells.js";
import type { CellCompletion } from "./completion.js";
import { HookCalls } from "./hooks.js";
import { HostRequests } from "./host-requests.js";
import { dispatchInbound } from "./inbound.js";
import { CellDisplays, type CellDisplay } from "./display.js";
import { LiveOutputs, type CellOutput } from "./live-output.js";
import { Operation } from "./operation.js";
import { DEFAULTS } from "./options.js";
import { workerRoutes } from "./routes.js";
import type { InboundMessage } from "./wire.js";

const out = (id: string, seq: number, text = "x") => ({ kind: "output" as const, id, seq, stream: "stdout" as const, text, dropped_bytes: 0 });
const done = (id: string, dropped?: number) => ({
  kind: "completed" as const,
  id,
  result: { kind: "cell" as const, status: "ok" as const, output: [], truncated_bytes: 0, ...(dropped === undefined ? {} : { displays_dropped: dropped }) },
});
const shown = (id: string, seq: number) => ({ kind: "display" as const, id, seq, data: { "text/plain": `d${seq}` }, metadata: {} });

/** A workbench's routes over real parts, with one running cell `c-1` whose live output is collected. */
function workbench(shuttingDown = false, display = false) {
  const invalidated: Array<[string, string]> = [];
  const invalidate = (reason: string, detail: string) => void invalidated.push([reason, detail]);
  const cells = new CellSlot();
  const scope = { role: "workbench" as const, config: { ...DEFAULTS }, running: () => true, cell: () => cells.run, channel: () => undefined, invalidate };
  const live = new LiveOutputs(true);
  const displays = new CellDisplays(display);
  const routes = workerRoutes({ requests: new HostRequests(scope, {}), cells, hooks: new HookCalls(scope), live, displays, shuttingDown: () => shuttingDown, invalidate });
  const cell = new Operation<CellCompletion>("c-1");
  cells.begin(cell, undefined);
  const seen: CellOutput[] = [];
  live.started("c-1", (o) => seen.push(o));
  const shownTo: CellDisplay[] = [];
  displays.started("c-1", (d) => shownTo.push(d));
  const send = (message: object) => dispatchInbound(message as InboundMessage, routes, (kind) => invalidate("unexpected", kind));
  return { send, cell, cells, seen, shownTo, invalidated };
}

describe("workerRoutes", () => {
  it("output is one route: the running cell's output reaches its listener, a broken sequence invalidates the generation", () => {
    const w = workbench();
    w.send(out("c-1", 0, "a"));
    w.send(out("c-1", 1, "b"));
    expect(w.seen.map((o) => o.text)).toEqual(["a", "b"]);
    expect(w.invalidated).toEqual([]);
    w.send(out("c-1", 5));
    expect(w.invalidated).toEqual([["protocol_violation", expect.stringMatching(/^output: .*ENVELOPE_OUTPUT_SEQUENCE/)]]);
  });

  it("completed settles the running cell and ends its output: a later output for it is a violation", async () => {
    const w = workbench();
    w.send(done("c-1"));
    await expect(w.cell.promise).resolves.toMatchObject({ id: "c-1", kind: "cell", status: "ok", endedBy: "worker" });
    expect(w.cells.run).toBeUndefined();
    w.send(out("c-1", 0));
    expect(w.invalidated).toEqual([["protocol_violation", expect.stringMatching(/^output: .*ENVELOPE_OUTPUT_AFTER_COMPLETED/)]]);
  });

  it("display is one route: the running cell's displays reach its listener, its completion checks displays_dropped", async () => {
    const w = workbench(false, true);
    w.send(shown("c-1", 0));
    w.send(shown("c-1", 1));
    expect(w.shownTo.map((d) => d.data["text/plain"])).toEqual(["d0", "d1"]);
    w.send(done("c-1", 0));
    await expect(w.cell.promise).resolves.toMatchObject({ status: "ok", displays_dropped: 0 });
    w.send(shown("c-1", 2));
    expect(w.invalidated).toEqual([["protocol_violation", expect.stringMatching(/^display: .*ENVELOPE_DISPLAY_AFTER_COMPLETED/)]]);
  });

  it("a completion whose displays_dropped breaks C20 invalidates the generation instead of completing the cell", () => {
    const w = workbench(false, true);
    w.send(shown("c-1", 0));
    w.send(done("c-1", 3));
    expect(w.invalidated).toEqual([["protocol_violation", expect.stringMatching(/^completed: .*ENVELOPE_DISPLAY_DROPPED/)]]);
    expect(w.cells.run?.op.id).toBe("c-1");
  });

  it("a display to a host that did not negotiate it invalidates the generation", () => {
    const w = workbench();
    w.send(shown("c-1", 0));
    expect(w.shownTo).toEqual([]);
    expect(w.invalidated).toEqual([["protocol_violation", expect.stringMatching(/^display: .*ENVELOPE_DISPLAY_NOT_NEGOTIATED/)]]);
  });

  it("a cell completed while a graceful shutdown runs is ended by shutdown", async () => {
    const w = workbench(true);
    w.send(done("c-1"));
    await expect(w.cell.promise).resolves.toMatchObject({ endedBy: "shutdown" });
  });

  it("a completion for an operation that is not running invalidates the generation, the cell still runs", () => {
    const w = workbench();
    w.send(done("c-9"));
    expect(w.invalidated).toEqual([["protocol_violation", 'completion for unknown operation "c-9"']]);
    expect(w.cells.run?.op.id).toBe("c-1");
  });

  it("a kind without a route (a second hello) is reported as unexpected", () => {
    const w = workbench();
    w.send({ kind: "hello" });
    expect(w.invalidated).toEqual([["unexpected", "hello"]]);
  });
});
