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
