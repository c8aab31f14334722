import { HostError } from "../errors";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** The longest idle timeout (a week): past that, "off" is what was meant. */
export const MAX_IDLE_TIMEOUT_MS = 7 * 86_400_000;
/** The most warm spares a host keeps (each is a live worker, ~30 MiB). */
export const MAX_SPARES = 64;
/** The most cells one model turn may be allowed (C10's max_cells_per_turn; its default is 50). */
export const MAX_CELLS_PER_TURN_OPTION = 1000;

/** A whole number written in digits, from `min` to `max`, or CLI_USAGE naming the option and the value. */
function wholeNumber(option: string, value: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new HostError("CLI_USAGE", `${option} needs a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

/** `--idle-timeout DURATION` (C19): `500ms`, `30s`, `5m`, `2h`, or `off`; undefined when off. */
export function parseIdleTimeout(value: string): number | undefined {
  if (value === "off") return undefined;
  const m = /^(\d+)(ms|s|m|h)$/.exec(value);
  const ms = m ? Number(m[1]) * UNIT_MS[m[2]!]! : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > MAX_IDLE_TIMEOUT_MS) {
    throw new HostError("CLI_USAGE", `--idle-timeout needs a duration from 1ms to 168h (500ms, 30s, 5m, 2h) or off, got ${JSON.stringify(value)}`);
  }
  return ms;
}

/** `--spare N` (C19): warm spare workbenches to keep, 0 (off) to 64. */
export function parseSpares(value: string): number {
  return wholeNumber("--spare", value, 0, MAX_SPARES);
}

/** `--max-cells-per-turn N` (C10, default 50): 1 to 1000 cells before a turn ends in a wait. */
export function parseMaxCells(value: string): number {
  return wholeNumber("--max-cells-per-turn", value, 1, MAX_CELLS_PER_TURN_OPTION);
}

/** The shortest and longest `--lease` (C21): under 500 ms a renewal round trip is a good part of it. */
export const MIN_LEASE_MS = 500;
export const MAX_LEASE_MS = 3_600_000;

/** `--lease DURATION` (C21, default 10s): how long a session's lease lasts unrenewed; `500ms`, `10s`, `2m`, `1h`. */
export function parseLease(value: string): number {
  const m = /^(\d+)(ms|s|m|h)$/.exec(value);
  const ms = m ? Number(m[1]) * UNIT_MS[m[2]!]! : Number.NaN;
  if (!Number.isSafeInteger(ms) || ms < MIN_LEASE_MS || ms > MAX_LEASE_MS) {
    throw new HostError("CLI_USAGE", `--lease needs a duration from 500ms to 1h (500ms, 10s, 2m), got ${JSON.stringify(value)}`);
  }
  return ms;
}
