import type { CellDisplay } from "@klbr/supervisor";
import { describe, expect, test } from "vitest";
import type { DisplayRef, PreparedDisplay } from "../store/displays";
import { DisplayRecorder, type DisplayOwner } from "./displays";

// C16/C20: a cell's output and displays reach the clients in the worker's order, and the cell ends
// only after all of them. Storing a display is an async Store write; here each one waits until the
// test lets it finish, so output that arrives meanwhile must queue behind it.

interface Stored {
  executionId: string;
  seq: number;
  listed: number[];
  finish(): void;
  fail(error: Error): void;
}

function world() {
  const stored: Stored[] = [];
  const incidents: Array<{ kind: string; detail: unknown }> = [];
  const seen: string[] = [];
  const store = {
    storeDisplay: (_sessionId: string, executionId: string, display: PreparedDisplay, listed: DisplayRef[]) =>
      new Promise<void>((resolve, reject) => {
        stored.push({ executionId, seq: display.ref.seq, listed: listed.map((r) => r.seq), finish: resolve, fail: reject });
      }),
    recordIncident: async (kind: string, detail: unknown) => void incidents.push({ kind, detail }),
  };
  const recorder = new DisplayRecorder({ store, now: () => 1, publish: (event) => void seen.push(`display:${event.display.seq}:${event.display.text}`) });
  const owner: DisplayOwner = { id: "ex-1", sessionId: "root", ended: false };
  const output = recorder.output(owner, (o) => void seen.push(o.text));
  const display = recorder.forExecution(owner);
  const show = (text: string) => display({ id: owner.id, seq: 0, data: { "text/plain": text }, metadata: {} } as CellDisplay);
  const say = (text: string) => output({ stream: "stdout", text, dropped_bytes: 0 } as never);
  return { recorder, owner, stored, incidents, seen, show, say };
}

/** Let every promise that can settle now settle. */
const drain = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("DisplayRecorder: output and displays in the worker's order", () => {
  test("output behind a display still being stored waits for it; the cell settles only once every display is stored and shown", async () => {
    const w = world();
    w.say("one");
    // Nothing pending: output goes out at once, in the same tick.
    expect(w.seen).toEqual(["one"]);
    w.show("A");
    w.say("two");
    w.show("B");
    w.say("three");
    await drain();
    // A is being stored: nothing after it is shown yet, and B is not stored before A is.
    expect(w.seen).toEqual(["one"]);
    expect(w.stored.map((s) => s.seq)).toEqual([0]);
    let settled = false;
    void w.recorder.settled(w.owner).then(() => (settled = true));
    w.stored[0]!.finish();
    await drain();
    expect(w.seen).toEqual(["one", "display:0:A", "two"]);
    // B is numbered and listed after A was stored: the execution's list grows one display at a time.
    expect(w.stored.map((s) => [s.seq, s.listed])).toEqual([
      [0, [0]],
      [1, [0, 1]],
    ]);
    expect(settled).toBe(false);
    w.stored[1]!.finish();
    await drain();
    expect(w.seen).toEqual(["one", "display:0:A", "two", "display:1:B", "three"]);
    expect(settled).toBe(true);
    // Idle again: output goes out at once.
    w.say("four");
    expect(w.seen.at(-1)).toBe("four");
    expect(w.recorder.dropped(w.owner, undefined)).toBe(0);
  });

  test("a display the store refuses is not shown and counted dropped; the next takes its number, and the output behind it still goes, in order", async () => {
    const w = world();
    w.show("A");
    w.say("after A");
    w.show("B");
    await drain();
    w.stored[0]!.fail(new Error("disk full"));
    await drain();
    expect(w.seen).toEqual(["after A"]);
    expect(w.stored.map((s) => [s.seq, s.listed])).toEqual([
      [0, [0]],
      [0, [0]],
    ]);
    w.stored[1]!.finish();
    await w.recorder.settled(w.owner);
    expect(w.seen).toEqual(["after A", "display:0:B"]);
    expect(w.recorder.dropped(w.owner, 2)).toBe(3);
    expect(w.incidents).toEqual([{ kind: "display.store_failed", detail: { execution_id: "ex-1", error: "Error: disk full" } }]);
  });

  test("the cell's end also waits for what arrived while it waited (a remote cell's display after the local end began)", async () => {
    const w = world();
    w.show("A");
    let settled = false;
    void w.recorder.settled(w.owner).then(() => (settled = true));
    w.show("B");
    await drain();
    w.stored[0]!.finish();
    await drain();
    expect(settled).toBe(false);
    w.stored[1]!.finish();
    await drain();
    expect(settled).toBe(true);
    expect(w.seen).toEqual(["display:0:A", "display:1:B"]);
  });

  test("what arrives after the execution ended is dropped on arrival, output and displays alike", async () => {
    const w = world();
    w.owner.ended = true;
    w.say("late");
    w.show("late");
    await w.recorder.settled(w.owner);
    expect(w.seen).toEqual([]);
    expect(w.stored).toEqual([]);
  });
});
