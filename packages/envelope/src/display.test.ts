// fixtures/display/: the C20 `display` message and the rules across messages (DisplaySequence).
// The Python suite runs the same files (python/tests/test_display_vectors.py).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DisplaySequence, type DisplaySequencedMessage } from "./display-sequence.js";
import { isEncodedImage, isMimeType } from "./display.js";
import { EnvelopeError } from "./error.js";
import { makeEnvelope, parseEnvelope } from "./parse.js";
import type { Message } from "./types.js";

interface Failure {
  code: string;
  path: string;
}
interface Case<I> {
  description: string;
  input: I;
  expected?: unknown;
  error?: Failure;
}
type Event = { sent: DisplaySequencedMessage } | { received: DisplaySequencedMessage };
interface SequenceInput {
  negotiated: boolean;
  events: Event[];
}

function load<I>(name: string): Case<I>[] {
  const file = fileURLToPath(new URL(`../../../fixtures/display/${name}`, import.meta.url));
  const cases = (JSON.parse(readFileSync(file, "utf8")) as { cases: Case<I>[] }).cases;
  if (!Array.isArray(cases) || cases.length === 0) throw new Error(`${file} holds no cases`);
  return cases;
}

function failure(fn: () => unknown): Failure {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(EnvelopeError);
    const { code, path } = error as EnvelopeError;
    return { code, path };
  }
  throw new Error("expected a throw");
}

const messages = load<unknown>("messages.json");
const sequences = load<SequenceInput>("sequences.json");

function play(input: SequenceInput, events: Event[]): DisplaySequence {
  const sequence = new DisplaySequence({ negotiated: input.negotiated });
  for (const event of events) {
    const message = "sent" in event ? event.sent : event.received;
    makeEnvelope("root", "g-1", message as Message);
    if ("sent" in event) sequence.sent(message);
    else sequence.received(message);
  }
  return sequence;
}

describe("fixtures/display/messages.json", () => {
  it("covers both outcomes with unique descriptions", () => {
    expect(new Set(messages.map((item) => item.description)).size).toBe(messages.length);
    expect(messages.filter((item) => item.error).length).toBeGreaterThanOrEqual(40);
  });

  it.each(messages.map((item) => [item.description, item] as const))("%s", (_description, item) => {
    if (item.error) {
      expect(failure(() => parseEnvelope(item.input))).toEqual(item.error);
    } else {
      const output = parseEnvelope(item.input, { sessionId: "root", generation: "g-1" });
      expect(output).toEqual(item.expected === "input" ? item.input : item.expected);
      expect(output).not.toBe(item.input);
    }
  });
});

describe("fixtures/display/sequences.json", () => {
  it("pins every sequence code", () => {
    const codes = new Set(sequences.flatMap((item) => (item.error ? [item.error.code] : [])));
    expect([...codes].sort()).toEqual([
      "ENVELOPE_DISPLAY_AFTER_COMPLETED",
      "ENVELOPE_DISPLAY_DROPPED",
      "ENVELOPE_DISPLAY_NOT_NEGOTIATED",
      "ENVELOPE_DISPLAY_SEQUENCE",
      "ENVELOPE_DISPLAY_UNKNOWN_OPERATION",
      "ENVELOPE_MISSING_FIELD",
    ]);
  });

  it.each(sequences.map((item) => [item.description, item] as const))("%s", (_description, item) => {
    const events = item.input.events;
    if (item.error) {
      const sequence = play(item.input, events.slice(0, -1));
      const last = events[events.length - 1]!;
      expect("received" in last).toBe(true);
      expect(failure(() => sequence.received((last as { received: DisplaySequencedMessage }).received))).toEqual(item.error);
    } else {
      const sequence = play(item.input, events);
      const next = Object.fromEntries(
        Object.keys((item.expected as { next_seq: object }).next_seq).map((id) => [id, sequence.nextSeq(id) ?? null]),
      );
      expect({ next_seq: next }).toEqual(item.expected);
    }
  });
});

describe("isMimeType / isEncodedImage", () => {
  it("reads MIME types as the vectors do", () => {
    expect(isMimeType("image/png")).toBe(true);
    expect(isMimeType("application/vnd.plotly.v1+json")).toBe(true);
    expect(isMimeType("image/PNG")).toBe(false);
    expect(isMimeType(5)).toBe(false);
  });

  it("checks a 5 MiB PNG's base64 whole (every character, in one pass)", () => {
    const bytes = Buffer.alloc(5 * 1024 * 1024, 7);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes);
    const text = bytes.toString("base64");
    expect(isEncodedImage("image/png", text)).toBe(true);
    const broken = `${text.slice(0, 3_000_000)}*${text.slice(3_000_001)}`;
    expect(isEncodedImage("image/png", broken)).toBe(false);
    expect(isEncodedImage("image/gif", text)).toBe(false);
  });
});
