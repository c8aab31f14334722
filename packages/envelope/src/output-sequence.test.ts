// OutputSequence beyond the shared vectors (fixtures/output/sequences.json): which messages start
// and end an operation, and the messages its errors carry.
import { describe, expect, it } from "vitest";
import { envelopeErrorOf } from "../test/thrown.js";
import { OutputSequence } from "./output-sequence.js";


describe("OutputSequence", () => {
  it("starts an operation only on an execute with an id", () => {
    const sequence = new OutputSequence({ negotiated: true });
    sequence.sent({ kind: "interrupt", id: "c-1" });
    sequence.sent({ kind: "host_reply", id: "c-2" });
    sequence.sent({ kind: "execute" });
    expect(sequence.nextSeq("c-1")).toBeUndefined();
    expect(sequence.nextSeq("c-2")).toBeUndefined();
    expect(envelopeErrorOf(() => sequence.received({ kind: "output", id: "c-1", seq: 0 })).code).toBe("ENVELOPE_OUTPUT_UNKNOWN_OPERATION");
    // An output without an id never matches the execute without one.
    expect(envelopeErrorOf(() => sequence.received({ kind: "output", seq: 0 })).code).toBe("ENVELOPE_OUTPUT_UNKNOWN_OPERATION");
  });

  it("ends an operation only on its completed: another message with the same id changes nothing", () => {
    const sequence = new OutputSequence({ negotiated: true });
    sequence.sent({ kind: "execute", id: "c-1" });
    sequence.received({ kind: "output", id: "c-1", seq: 0 });
    sequence.received({ kind: "host_request", id: "c-1" });
    sequence.received({ kind: "hello" });
    sequence.received({ kind: "output", id: "c-1", seq: 1 });
    expect(sequence.nextSeq("c-1")).toBe(2);
    sequence.received({ kind: "completed", id: "c-1" });
    expect(sequence.nextSeq("c-1")).toBeUndefined();
  });

  it("does not remember a completed for an operation that was not running", () => {
    const sequence = new OutputSequence({ negotiated: true });
    sequence.received({ kind: "completed", id: "c-9" });
    expect(envelopeErrorOf(() => sequence.received({ kind: "output", id: "c-9", seq: 0 })).code).toBe("ENVELOPE_OUTPUT_UNKNOWN_OPERATION");
  });

  it("says what was expected in each error", () => {
    const off = new OutputSequence({ negotiated: false });
    expect(envelopeErrorOf(() => off.received({ kind: "output", id: "c-1", seq: 0 })).message).toBe(
      'ENVELOPE_OUTPUT_NOT_NEGOTIATED at kind: expected no output: the worker was not started with --live-output, got "output"',
    );
    const on = new OutputSequence({ negotiated: true });
    expect(envelopeErrorOf(() => on.received({ kind: "output", id: "c-1", seq: 0 })).message).toBe(
      'ENVELOPE_OUTPUT_UNKNOWN_OPERATION at id: expected the id of a running execute, got "c-1"',
    );
    on.sent({ kind: "execute", id: "c-1" });
    on.received({ kind: "output", id: "c-1", seq: 0 });
    expect(envelopeErrorOf(() => on.received({ kind: "output", id: "c-1", seq: 3 })).message).toBe(
      "ENVELOPE_OUTPUT_SEQUENCE at seq: expected seq 1, got 3",
    );
    on.received({ kind: "completed", id: "c-1" });
    expect(envelopeErrorOf(() => on.received({ kind: "output", id: "c-1", seq: 1 })).message).toBe(
      'ENVELOPE_OUTPUT_AFTER_COMPLETED at id: expected the id of a running execute (this one completed), got "c-1"',
    );
  });
});
