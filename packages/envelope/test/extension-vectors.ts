// The shared vectors of an extension message (fixtures/output/ for C16, fixtures/display/ for C20):
// messages.json, each envelope parsed or refused with its code and path, and sequences.json, the
// rules across messages played through the extension's sequence checker. Each test file names its
// directory, its checker and what its vectors must cover; the Python suite runs the same files.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EnvelopeError } from "../src/error.js";
import { makeEnvelope, parseEnvelope } from "../src/parse.js";
import type { Message } from "../src/types.js";

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

/** What the rules across messages are checked by (OutputSequence, DisplaySequence). */
export interface Sequence<M> {
  sent(message: M): void;
  received(message: M): void;
  nextSeq(id: string): number | undefined;
}

/** One extension's vectors and what they must cover. */
export interface ExtensionVectors<M> {
  /** The directory under fixtures/. */
  dir: string;
  /** A checker for a worker started with (or without) the extension's flag. */
  sequence: (negotiated: boolean) => Sequence<M>;
  /** messages.json holds at least this many refusals. */
  minErrors: number;
  /** Every code sequences.json pins, sorted. */
  sequenceCodes: string[];
}

type Event<M> = { sent: M } | { received: M };

function load<I>(dir: string, name: string): Case<I>[] {
  const file = fileURLToPath(new URL(`../../../fixtures/${dir}/${name}`, import.meta.url));
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

/** Declare the describe blocks of both files of an extension's vectors. */
export function describeExtensionVectors<M>(spec: ExtensionVectors<M>): void {
  const messages = load<unknown>(spec.dir, "messages.json");
  const sequences = load<{ negotiated: boolean; events: Event<M>[] }>(spec.dir, "sequences.json");

  const play = (negotiated: boolean, events: Event<M>[]): Sequence<M> => {
    const sequence = spec.sequence(negotiated);
    for (const event of events) {
      const message = "sent" in event ? event.sent : event.received;
      // Every event is a valid message: the sequence rules are all that is tested here.
      makeEnvelope("root", "g-1", message as Message);
      if ("sent" in event) sequence.sent(message);
      else sequence.received(message);
    }
    return sequence;
  };

  describe(`fixtures/${spec.dir}/messages.json`, () => {
    it("covers both outcomes with unique descriptions", () => {
      expect(new Set(messages.map((item) => item.description)).size).toBe(messages.length);
      expect(messages.filter((item) => item.error).length).toBeGreaterThanOrEqual(spec.minErrors);
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

  describe(`fixtures/${spec.dir}/sequences.json`, () => {
    it("pins every sequence code", () => {
      const codes = new Set(sequences.flatMap((item) => (item.error ? [item.error.code] : [])));
      expect([...codes].sort()).toEqual(spec.sequenceCodes);
    });

    it.each(sequences.map((item) => [item.description, item] as const))("%s", (_description, item) => {
      const events = item.input.events;
      if (item.error) {
        const sequence = play(item.input.negotiated, events.slice(0, -1));
        const last = events[events.length - 1]!;
        expect("received" in last).toBe(true);
        expect(failure(() => sequence.received((last as { received: M }).received))).toEqual(item.error);
      } else {
        const sequence = play(item.input.negotiated, events);
        const next = Object.fromEntries(
          Object.keys((item.expected as { next_seq: object }).next_seq).map((id) => [id, sequence.nextSeq(id) ?? null]),
        );
        expect({ next_seq: next }).toEqual(item.expected);
      }
    });
  });
}
