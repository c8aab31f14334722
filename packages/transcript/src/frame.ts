import { TranscriptError, describeValue } from "./errors.js";
import type { InputEvent, ResultFacts } from "./event.js";
import { formatDuration } from "./duration.js";
import { inputLabel } from "./label.js";
import { stampOrUnknown } from "./stamp.js";

/** The separator between the parts of a frame line: a space, U+00B7 MIDDLE DOT, a space. */
export const FRAME_SEPARATOR = " \u00b7 ";

function checkEvent(event: unknown): void {
  const payload: unknown = typeof event === "object" && event !== null ? (event as InputEvent).payload : undefined;
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    throw new TranscriptError(
      "TRANSCRIPT_INVALID_EVENT",
      `an input event needs an object payload, got event ${describeValue(event)}`,
    );
  }
}

/**
 * The line in front of an input: `[<stamp or time unknown> · <label>]`. Derived from the
 * durable event, never stored.
 */
export function frameInputLine(event: InputEvent): string {
  checkEvent(event);
  const label = inputLabel(event);
  return `[${stampOrUnknown(event.received_at_ms)}${FRAME_SEPARATOR}${label}]`;
}

/**
 * The input as the model reads it: the frame line, a newline, then the sender's words exactly
 * as stored. Returns a new string; the event is not touched.
 */
export function frameInput(event: InputEvent): string {
  const line = frameInputLine(event);
  const text: unknown = event.payload.text;
  if (typeof text !== "string") {
    throw new TranscriptError("TRANSCRIPT_INVALID_EVENT", `event.payload.text must be a string, got ${describeValue(text)}`);
  }
  return `${line}\n${text}`;
}

/**
 * The line in front of a tool result: `[<stamp> · ran 420ms]`, or `[<stamp>]` when no cell ran
 * (`duration_ms` absent or null).
 */
export function frameResult(facts: ResultFacts): string {
  if (typeof facts !== "object" || facts === null) {
    throw new TranscriptError("TRANSCRIPT_INVALID_EVENT", `frameResult needs an object, got ${describeValue(facts)}`);
  }
  const stamp = stampOrUnknown(facts.observed_at_ms);
  const duration = facts.duration_ms;
  if (duration === undefined || duration === null) return `[${stamp}]`;
  return `[${stamp}${FRAME_SEPARATOR}ran ${formatDuration(duration)}]`;
}
