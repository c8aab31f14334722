import { TranscriptError, describeValue } from "./errors.js";

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * Formats how long something ran (C9), always rounding down so a duration is never overstated:
 * `420ms` below one second, `4.2s` below one minute, `3m07s` below one hour, `1h15m07s` from one
 * hour (hours are not folded into days).
 */
export function formatDuration(ms: number): string {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
    throw new TranscriptError(
      "TRANSCRIPT_INVALID_DURATION",
      `formatDuration needs a finite number of ms >= 0, got ${describeValue(ms)}`,
    );
  }
  if (ms < SECOND) return `${Math.floor(ms)}ms`;
  if (ms < MINUTE) {
    const tenths = Math.floor(ms / 100);
    return `${Math.floor(tenths / 10)}.${tenths % 10}s`;
  }
  const totalSeconds = Math.floor(ms / SECOND);
  const seconds = totalSeconds % 60;
  const totalMinutes = Math.floor(totalSeconds / 60);
  if (ms < HOUR) return `${totalMinutes}m${pad2(seconds)}s`;
  return `${Math.floor(totalMinutes / 60)}h${pad2(totalMinutes % 60)}m${pad2(seconds)}s`;
}
