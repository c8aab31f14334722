// fixtures/output/: the C16 `output` message and the rules across messages (OutputSequence).
// The Python suite runs the same files (python/tests/test_output_vectors.py).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EnvelopeError } from "./error.js";
import { OutputSequence, type SequencedMessage } from "./output-sequence.js";
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
type Event = { sent: SequencedMessage } | { received: SequencedMessage };
interface SequenceInput {
  negotiated: boolean;
  events: Event[];
}

function load<I>(name: string): Case<I>[] {
  const file = fileURLToPath(new URL(`../../../fixtures/output/${name}`, import.meta.url));
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

function play(input: SequenceInput, events: Event[]): OutputSequence {
  const sequence = new OutputSequence({ negotiated: input.negotiated });
  for (const event of events) {
    const message = "sent" in event ? event.sent : event.received;
    // Every event is a valid message: the sequence rules are all that is tested here.
    makeEnvelope("root", "g-1", message as Message);
    if ("sent" in event) sequence.sent(message);
    else sequence.received(message);
  }
  return sequence;
}

describe("fixtures/output/messages.json", () => {
  it("covers both outcomes with unique descriptions", () => {
    expect(new Set(messages.map((item) => item.description)).size).toBe(messages.length);
    expect(messages.filter((item) => item.error).length).toBeGreaterThanOrEqual(20);
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

describe("fixtures/output/sequences.json", () => {
  it("pins every sequence code", () => {
    const codes = new Set(sequences.flatMap((item) => (item.error ? [item.error.code] : [])));
    expect([...codes].sort()).toEqual([
      "ENVELOPE_OUTPUT_AFTER_COMPLETED",
      "ENVELOPE_OUTPUT_NOT_NEGOTIATED",
      "ENVELOPE_OUTPUT_SEQUENCE",
      "ENVELOPE_OUTPUT_UNKNOWN_OPERATION",
    ]);
  });

  it.each(sequences.map((item) => [item.description, item] as const))("%s", (_description, item) => {
    const events = item.input.events;
    if (item.error) {
      const sequence = play(item.input, events.slice(0, -1));
      const last = events[events.length - 1]!;
      expect("received" in last).toBe(true);
      expect(failure(() => sequence.received((last as { received: SequencedMessage }).received))).toEqual(item.error);
    } else {
      const sequence = play(item.input, events);
      const next = Object.fromEntries(
        Object.keys((item.expected as { next_seq: object }).next_seq).map((id) => [id, sequence.nextSeq(id) ?? null]),
      );
      expect({ next_seq: next }).toEqual(item.expected);
    }
  });
});
