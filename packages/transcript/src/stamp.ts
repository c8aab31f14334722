import { TranscriptError, describeValue } from "./errors.js";

/** The latest instant a four-digit-year stamp can show: 9999-12-31T23:59:59.999Z. */
export const MAX_STAMP_MS = 253_402_300_799_999;

/** What a frame says in place of an instant when the record has no usable time. */
export const TIME_UNKNOWN = "time unknown";

/**
 * Formats an instant (ms since the Unix epoch) as `YYYY-MM-DDTHH:MM:SSZ`, floored to the second.
 * Epoch zero (and anything below the first millisecond) is what a missing time decays to, so it
 * reads `time unknown` (C9): the one stamp function every package uses, with one answer.
 */
export function formatStamp(ms: number): string {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0 || ms > MAX_STAMP_MS) {
    throw new TranscriptError(
      "TRANSCRIPT_INVALID_TIME",
      `formatStamp needs a finite number of ms in [0, ${MAX_STAMP_MS}], got ${describeValue(ms)}`,
    );
  }
  if (ms < 1) return TIME_UNKNOWN;
  const floored = Math.floor(ms / 1000) * 1000;
  // toISOString gives YYYY-MM-DDTHH:MM:SS.mmmZ for every year in 0..9999; drop the millis.
  return `${new Date(floored).toISOString().slice(0, 19)}Z`;
}

/**
 * True when a record's time can be shown: a finite number of ms after the epoch, within the
 * four-digit-year range. Epoch zero is not usable: it is what a missing time decays to, so
 * rendering it would claim 1970.
 */
export function isUsableTime(ms: unknown): ms is number {
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 1 && ms <= MAX_STAMP_MS;
}

/** The stamp of a record's time, or `time unknown` when the time is not usable. */
export function stampOrUnknown(ms: unknown): string {
  return isUsableTime(ms) ? formatStamp(ms) : TIME_UNKNOWN;
}
