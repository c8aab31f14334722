// Every refusal names what it refused (exact message and code), and every limit at its edge.
import { describe, expect, it } from "vitest";
import { formatDuration } from "./duration.js";
import { TranscriptError, describeValue, isTranscriptError, type TranscriptErrorCode } from "./errors.js";
import type { InputEvent } from "./event.js";
import { frameInput, frameInputLine, frameResult } from "./frame.js";
import { inputLabel } from "./label.js";
import { MAX_STAMP_MS, formatStamp, isUsableTime, stampOrUnknown } from "./stamp.js";

function refusal(fn: () => unknown): { code: TranscriptErrorCode; message: string } {
  try {
    fn();
  } catch (error) {
    const { code, message } = error as { code: TranscriptErrorCode; message: string };
    return { code, message };
  }
  throw new Error("expected a refusal");
}

const withPayload = (payload: Record<string, unknown>, source = "operator") =>
  ({ source, received_at_ms: null, payload: { text: "t", ...payload } }) as InputEvent;

describe("TranscriptError and describeValue", () => {
  it("recognises another copy's brand and nothing else, without throwing", () => {
    const brand = Symbol.for("@klbr/transcript/error");
    expect(isTranscriptError(Object.assign(new Error("x"), { [brand]: true }))).toBe(true);
    expect(isTranscriptError(null)).toBe(false);
    expect(isTranscriptError("TRANSCRIPT_INVALID_TIME")).toBe(false);
    expect(isTranscriptError(Object.assign(() => undefined, { [brand]: true }))).toBe(false);
    const error = new TranscriptError("TRANSCRIPT_INVALID_TIME", "m");
    expect(error.name).toBe("TranscriptError");
    expect(isTranscriptError(error)).toBe(true);
  });

  it("renders NaN, bigints, undefined, cycles and symbols", () => {
    expect(describeValue(Number.NaN)).toBe("NaN");
    expect(describeValue(3n)).toBe("3");
    expect(describeValue(undefined)).toBe("undefined");
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(describeValue(cycle)).toBe("[object Object]");
    expect(describeValue(Symbol("s"))).toBe("Symbol(s)");
    expect(describeValue({ a: "b" })).toBe('{"a":"b"}');
  });
});

describe("formatDuration at each unit's edge", () => {
  it.each([
    [0, "0ms"],
    [999.9, "999ms"],
    [1000, "1.0s"],
    [59_999, "59.9s"],
    [60_000, "1m00s"],
    [69_000, "1m09s"],
    [70_000, "1m10s"],
    [3_599_999, "59m59s"],
    [3_600_000, "1h00m00s"],
    [36_000_000 + 610_000, "10h10m10s"],
    [100 * 3_600_000, "100h00m00s"],
  ])("%d ms reads %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it("names a refused duration", () => {
    expect(refusal(() => formatDuration(-1))).toEqual({
      code: "TRANSCRIPT_INVALID_DURATION",
      message: "formatDuration needs a finite number of ms >= 0, got -1",
    });
    expect(refusal(() => formatDuration("5" as never)).message).toBe('formatDuration needs a finite number of ms >= 0, got "5"');
  });
});

describe("formatStamp and usable times at their edges", () => {
  it("the first millisecond and the last of year 9999 are stamped; below and above are not", () => {
    expect(formatStamp(0.5)).toBe("time unknown");
    expect(formatStamp(1)).toBe("1970-01-01T00:00:00Z");
    expect(formatStamp(MAX_STAMP_MS)).toBe("9999-12-31T23:59:59Z");
    expect(isUsableTime(0.5)).toBe(false);
    expect(isUsableTime(1)).toBe(true);
    expect(isUsableTime(MAX_STAMP_MS)).toBe(true);
    expect(isUsableTime(MAX_STAMP_MS + 1)).toBe(false);
    expect(stampOrUnknown(MAX_STAMP_MS + 1)).toBe("time unknown");
  });

  it("names a refused instant", () => {
    expect(refusal(() => formatStamp(MAX_STAMP_MS + 1))).toEqual({
      code: "TRANSCRIPT_INVALID_TIME",
      message: `formatStamp needs a finite number of ms in [0, 253402300799999], got ${MAX_STAMP_MS + 1}`,
    });
    expect(refusal(() => formatStamp(-1)).message).toBe("formatStamp needs a finite number of ms in [0, 253402300799999], got -1");
    expect(refusal(() => formatStamp("1" as never)).code).toBe("TRANSCRIPT_INVALID_TIME");
  });
});

describe("frame refusals", () => {
  it.each<[string, () => unknown, string]>([
    ["a null event", () => frameInputLine(null as never), "an input event needs an object payload, got event null"],
    ["a null payload", () => frameInputLine({ source: "x", payload: null } as never), 'an input event needs an object payload, got event {"source":"x","payload":null}'],
    ["an array payload", () => frameInputLine({ source: "x", payload: [] } as never), 'an input event needs an object payload, got event {"source":"x","payload":[]}'],
    ["a string payload", () => frameInput({ source: "x", payload: "t" } as never), 'an input event needs an object payload, got event {"source":"x","payload":"t"}'],
    ["a text that is not a string", () => frameInput(withPayload({ text: 5 })), "event.payload.text must be a string, got 5"],
    ["a missing text", () => frameInput({ source: "x", received_at_ms: null, payload: {} } as never), "event.payload.text must be a string, got undefined"],
    ["result facts that are not an object", () => frameResult("x" as never), 'frameResult needs an object, got "x"'],
  ])("%s", (_what, fn, message) => {
    expect(refusal(fn)).toEqual({ code: "TRANSCRIPT_INVALID_EVENT", message });
  });

  it("a result line without a duration, with a null one, and with zero", () => {
    expect(frameResult({ observed_at_ms: 1000 })).toBe("[1970-01-01T00:00:01Z]");
    expect(frameResult({ observed_at_ms: 1000, duration_ms: null })).toBe("[1970-01-01T00:00:01Z]");
    expect(frameResult({ observed_at_ms: 1000, duration_ms: 0 })).toBe("[1970-01-01T00:00:01Z · ran 0ms]");
  });
});

describe("inputLabel refusals and precedence", () => {
  const ID_RULE = "must be an identifier (1..128 of A-Z a-z 0-9 _ . -), got";
  it.each<[string, InputEvent, string]>([
    ["a nested request that is not an object", withPayload({ peer_request: "x" }), 'payload.peer_request must be an object with id and session, got "x"'],
    ["a nested request with an empty id", withPayload({ peer_request: { id: "", session: "s" } }), `payload.peer_request.id ${ID_RULE} ""`],
    ["a nested request with a bad session", withPayload({ peer_request: { id: "r", session: "a b" } }), `payload.peer_request.session ${ID_RULE} "a b"`],
    ["a result without its peer", withPayload({ result_of: "r" }), `payload.from_session ${ID_RULE} undefined`],
    ["a result id that is not one", withPayload({ result_of: 5, from_session: "s" }), `payload.result_of ${ID_RULE} 5`],
    ["a sender without a request id", withPayload({ from_session: "s" }), `payload.request_id ${ID_RULE} undefined`],
    ["a request id without a sender", withPayload({ request_id: "r" }), `payload.from_session ${ID_RULE} undefined`],
    ["a non-ASCII request id", withPayload({ request_id: "é", from_session: "s" }), `payload.request_id ${ID_RULE} "é"`],
  ])("%s", (_what, event, message) => {
    expect(refusal(() => inputLabel(event))).toEqual({ code: "TRANSCRIPT_INVALID_PEER_REQUEST", message });
  });

  it("a peer identity is the label whatever the source says; null identity fields are absent", () => {
    expect(inputLabel(withPayload({ request_id: "r", from_session: "s" }, ""))).toBe("peer request r from s");
    expect(inputLabel(withPayload({ result_of: "r", request_id: "q", from_session: "s" }))).toBe("peer result r from s");
    expect(inputLabel(withPayload({ peer_request: null, request_id: null, result_of: null, from_session: null }))).toBe("operator");
  });

  it("a source of 128 characters is the label, 129 is refused with the rule", () => {
    expect(inputLabel(withPayload({}, "s".repeat(128)))).toBe("s".repeat(128));
    expect(refusal(() => inputLabel(withPayload({}, "s".repeat(129))))).toEqual({
      code: "TRANSCRIPT_INVALID_LABEL",
      message: `event.source must be 1..128 characters with no control characters or brackets, got "${"s".repeat(129)}"`,
    });
    expect(refusal(() => inputLabel(null as never)).message).toBe(
      "event.source must be 1..128 characters with no control characters or brackets, got undefined",
    );
  });

  it("refuses control characters, line separators and brackets, and keeps their neighbours", () => {
    for (const bad of ["\u0000", "\u001f", "\u007f", "\u0080", "\u009f", "\u2028", "\u2029", "[", "]"]) {
      expect(refusal(() => inputLabel(withPayload({}, `a${bad}b`))).code).toBe("TRANSCRIPT_INVALID_LABEL");
    }
    for (const fine of [" ", "~", "\u00a0", "\u2027", "\u202a", "{", "\\"]) {
      expect(inputLabel(withPayload({}, `a${fine}b`))).toBe(`a${fine}b`);
    }
  });
});
