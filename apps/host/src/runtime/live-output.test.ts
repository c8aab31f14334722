import { describe, expect, test } from "vitest";
import { LiveOutputHub, type LiveOutputEvent } from "./live-output";

const out = (text: string, seq = 0) => ({ id: "op", seq, stream: "stdout" as const, text, dropped_bytes: 0 });

describe("LiveOutputHub.forExecution", () => {
  test("a cell's own output and its remote cells' (each counting from 0) are one stream, numbered 0, 1, 2, ...", () => {
    const hub = new LiveOutputHub();
    const seen: LiveOutputEvent[] = [];
    hub.watch({ sessionId: "s" }, (e) => seen.push(e));
    const cell = { id: "ex-1", sessionId: "s", ended: false };
    const own = hub.forExecution(cell);
    const remoteA = hub.forExecution(cell);
    const remoteB = hub.forExecution(cell); // a later operation, on a reconnected generation
    own(out("a", 0));
    remoteA(out("b", 0));
    remoteA(out("c", 1));
    own(out("d", 1));
    remoteB(out("e", 0));
    expect(seen.map((e) => [e.seq, e.text, e.execution_id, e.session_id])).toEqual([
      [0, "a", "ex-1", "s"],
      [1, "b", "ex-1", "s"],
      [2, "c", "ex-1", "s"],
      [3, "d", "ex-1", "s"],
      [4, "e", "ex-1", "s"],
    ]);
  });

  test("each execution has its own numbering; a watcher that joins late sees the stream's numbers", () => {
    const hub = new LiveOutputHub();
    const one = hub.forExecution({ id: "ex-1", sessionId: "s", ended: false });
    const two = hub.forExecution({ id: "ex-2", sessionId: "s", ended: false });
    one(out("unwatched"));
    const seen: LiveOutputEvent[] = [];
    hub.watch({}, (e) => seen.push(e));
    one(out("x"));
    two(out("y"));
    expect(seen.map((e) => [e.execution_id, e.seq])).toEqual([
      ["ex-1", 1],
      ["ex-2", 0],
    ]);
  });

  test("output after its execution ended is not published (a remote cell still being cancelled)", () => {
    const hub = new LiveOutputHub();
    const seen: LiveOutputEvent[] = [];
    hub.watch({ executionId: "ex-1" }, (e) => seen.push(e));
    const cell = { id: "ex-1", sessionId: "s", ended: false };
    const remote = hub.forExecution(cell);
    remote(out("before"));
    cell.ended = true;
    remote(out("after"));
    expect(seen.map((e) => e.text)).toEqual(["before"]);
  });
});

describe("LiveOutputHub watchers", () => {
  const event = (over: Partial<LiveOutputEvent> = {}): LiveOutputEvent => ({ type: "output", session_id: "s", execution_id: "ex-1", seq: 0, stream: "stdout", text: "t", dropped_bytes: 0, ...over });

  test("a watcher gets what its filter names: an execution, a session, or (neither) everything", () => {
    const hub = new LiveOutputHub();
    const got: Record<string, string[]> = { ex: [], session: [], all: [], both: [] };
    hub.watch({ executionId: "ex-1" }, (e) => got.ex!.push(e.text));
    hub.watch({ sessionId: "s" }, (e) => got.session!.push(e.text));
    hub.watch({}, (e) => got.all!.push(e.text));
    hub.watch({ executionId: "ex-1", sessionId: "t" }, (e) => got.both!.push(e.text));
    hub.publish(event({ text: "a" }));
    hub.publish(event({ text: "b", execution_id: "ex-2" }));
    hub.publish(event({ text: "c", session_id: "t", execution_id: "ex-3" }));
    hub.publish(event({ text: "d", session_id: "t" }));
    expect(got).toEqual({ ex: ["a", "d"], session: ["a", "b"], all: ["a", "b", "c", "d"], both: ["d"] });
  });

  test("forExecution publishes every field of the message under its execution", () => {
    const hub = new LiveOutputHub();
    const seen: LiveOutputEvent[] = [];
    hub.watch({}, (e) => seen.push(e));
    hub.forExecution({ id: "ex-9", sessionId: "s9", ended: false })({ id: "op", seq: 7, stream: "stderr", text: "boom", dropped_bytes: 12 });
    expect(seen).toEqual([{ type: "output", session_id: "s9", execution_id: "ex-9", seq: 0, stream: "stderr", text: "boom", dropped_bytes: 12 }]);
  });

  test("unwatching stops delivery; watched says whether anyone listens", () => {
    const hub = new LiveOutputHub();
    expect(hub.watched).toBe(false);
    const seen: string[] = [];
    const stop = hub.watch({}, (e) => seen.push(e.text));
    expect(hub.watched).toBe(true);
    hub.publish(event({ text: "a" }));
    stop();
    expect(hub.watched).toBe(false);
    hub.publish(event({ text: "b" }));
    expect(seen).toEqual(["a"]);
  });

  test("a watcher that throws is dropped; the others still get the event and the next ones", () => {
    const hub = new LiveOutputHub();
    const seen: string[] = [];
    let thrown = 0;
    hub.watch({}, () => {
      thrown += 1;
      throw new Error("client gone");
    });
    hub.watch({}, (e) => seen.push(e.text));
    hub.publish(event({ text: "a" }));
    hub.publish(event({ text: "b" }));
    expect(thrown).toBe(1);
    expect(seen).toEqual(["a", "b"]);
  });

  test("a listener may unwatch itself while the event is handed out", () => {
    const hub = new LiveOutputHub();
    const seen: string[] = [];
    const stop = hub.watch({}, () => stop());
    hub.watch({}, (e) => seen.push(e.text));
    hub.publish(event({ text: "a" }));
    expect(seen).toEqual(["a"]);
  });
});
