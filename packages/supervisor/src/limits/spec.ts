/**
 * The resource limits of C17 as values, and their one text form
 * (`memory=2GiB,cpu=10m,procs=512,file=1GiB,tmp=512MiB`): a pure parser and its inverse.
 */

/** The five limits of C17; an absent one is not set. */
export interface ResourceLimits {
  /** The whole tree's resident memory (cgroup), or each process's address space (rlimit). */
  memoryBytes?: number;
  /** CPU time of the whole tree per generation (cgroup), or of each process (rlimit). */
  cpuMs?: number;
  /** Live tasks of the tree (cgroup), or of the host's user (rlimit). */
  procs?: number;
  /** The largest file one process may write (RLIMIT_FSIZE, whatever the mechanism). */
  fileBytes?: number;
  /** The size of the sandbox's private /tmp (bwrap's tmpfs `--size`). */
  tmpBytes?: number;
}

/** The names used on the command line, in their canonical order. */
export const LIMIT_NAMES = ["memory", "cpu", "procs", "file", "tmp"] as const;
export type LimitName = (typeof LIMIT_NAMES)[number];

/** The completion reason a limit ends a worker with (C17). */
export type LimitReason = "memory_limit" | "cpu_limit" | "procs_limit";

const KEYS: Record<LimitName, keyof ResourceLimits> = {
  memory: "memoryBytes",
  cpu: "cpuMs",
  procs: "procs",
  file: "fileBytes",
  tmp: "tmpBytes",
};

/** Smallest accepted values: below these the worker itself cannot start, which would only confuse. */
export const LIMIT_MINIMUMS = {
  memory: 16 * 1024 * 1024,
  cpu: 1000,
  procs: 4,
  file: 1024,
  tmp: 1024 * 1024,
} as const;

/** A limit text that does not parse: `part` is the offending `name=value` (or the whole text). */
export class LimitsSyntaxError extends Error {
  override readonly name = "LimitsSyntaxError";
  readonly code = "LIMITS_INVALID";
  readonly part: string;
  constructor(part: string, message: string) {
    super(`${JSON.stringify(part)}: ${message}`);
    this.part = part;
  }
}

const BINARY_UNITS: Record<string, number> = {
  "": 1,
  B: 1,
  K: 1024,
  KiB: 1024,
  M: 1024 ** 2,
  MiB: 1024 ** 2,
  G: 1024 ** 3,
  GiB: 1024 ** 3,
  T: 1024 ** 4,
  TiB: 1024 ** 4,
};

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

const SIZE = /^(\d+(?:\.\d+)?)([A-Za-z]*)$/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;

/** `2GiB` -> bytes (binary units; `K`, `M`, `G`, `T` are binary too, as for ulimit and docker). */
export function parseSize(part: string, value: string): number {
  const m = SIZE.exec(value);
  if (!m) throw new LimitsSyntaxError(part, `${JSON.stringify(value)} is not a size (e.g. 512MiB, 2GiB, 1048576)`);
  const unit = m[2]!;
  const factor = BINARY_UNITS[unit];
  if (factor === undefined) {
    const hint = /^[kmgtKMGT][bB]$/.test(unit) ? ` (use ${unit[0]!.toUpperCase()}iB: sizes are binary)` : " (B, KiB, MiB, GiB or TiB)";
    throw new LimitsSyntaxError(part, `unknown size unit ${JSON.stringify(unit)}${hint}`);
  }
  if (unit === "" || unit === "B") {
    if (m[1]!.includes(".")) throw new LimitsSyntaxError(part, "a size in bytes must be a whole number");
  }
  return checkedInteger(part, Math.floor(Number(m[1]) * factor));
}

/** `10m`, `90s`, `1m30s`, `500ms`, `2h` -> milliseconds (a unit is required: `cpu=10` is ambiguous). */
export function parseDuration(part: string, value: string): number {
  if (/^\d+(\.\d+)?$/.test(value)) throw new LimitsSyntaxError(part, `${JSON.stringify(value)} needs a unit: ms, s, m or h (e.g. 10m)`);
  let total = 0;
  let at = 0;
  DURATION_PART.lastIndex = 0;
  for (let m = DURATION_PART.exec(value); m; m = DURATION_PART.exec(value)) {
    total += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    at = DURATION_PART.lastIndex;
  }
  if (at === 0 || at !== value.length) {
    throw new LimitsSyntaxError(part, `${JSON.stringify(value)} is not a duration (e.g. 500ms, 90s, 10m, 1h, 1m30s)`);
  }
  return checkedInteger(part, Math.floor(total));
}

function parseCount(part: string, value: string): number {
  if (!/^\d+$/.test(value)) throw new LimitsSyntaxError(part, `${JSON.stringify(value)} is not a whole number of processes`);
  return checkedInteger(part, Number(value));
}

function checkedInteger(part: string, n: number): number {
  if (!Number.isSafeInteger(n)) throw new LimitsSyntaxError(part, "the value is too large");
  return n;
}

const PARSERS: Record<LimitName, (part: string, value: string) => number> = {
  memory: parseSize,
  cpu: parseDuration,
  procs: parseCount,
  file: parseSize,
  tmp: parseSize,
};

/**
 * Parse `memory=2GiB,cpu=10m,...` (several texts are one list, so `--limit` may repeat). Spaces
 * around items are ignored; an empty text sets nothing. Every error names the offending part:
 * an unknown name, a missing `=`, a bad value, a value below the minimum, a name given twice.
 */
export function parseLimits(texts: string | readonly string[]): ResourceLimits {
  const limits: ResourceLimits = {};
  const seen = new Set<LimitName>();
  for (const text of typeof texts === "string" ? [texts] : texts) {
    for (const raw of text.split(",")) {
      const part = raw.trim();
      if (part === "") {
        if (text.trim() === "") continue;
        throw new LimitsSyntaxError(text, "an empty item (two commas, or a comma at an end)");
      }
      const eq = part.indexOf("=");
      if (eq < 0) throw new LimitsSyntaxError(part, `expected name=value, one of ${LIMIT_NAMES.join(", ")}`);
      const name = part.slice(0, eq).trim();
      const value = part.slice(eq + 1).trim();
      if (!(LIMIT_NAMES as readonly string[]).includes(name)) {
        throw new LimitsSyntaxError(part, `unknown limit ${JSON.stringify(name)} (known: ${LIMIT_NAMES.join(", ")})`);
      }
      const key = name as LimitName;
      if (seen.has(key)) throw new LimitsSyntaxError(part, `${key} is given twice`);
      seen.add(key);
      if (value === "") throw new LimitsSyntaxError(part, "the value is empty");
      const n = PARSERS[key](part, value);
      const min = LIMIT_MINIMUMS[key];
      if (n < min) throw new LimitsSyntaxError(part, `${key} must be at least ${formatValue(key, min)}`);
      limits[KEYS[key]] = n;
    }
  }
  return limits;
}

/** The canonical text of one limit's value: the largest binary unit that divides it, `s`/`m`/`h` likewise. */
export function formatValue(name: LimitName, n: number): string {
  if (name === "procs") return String(n);
  if (name === "cpu") {
    for (const [unit, ms] of [["h", 3_600_000], ["m", 60_000], ["s", 1000]] as const) if (n % ms === 0) return `${n / ms}${unit}`;
    return `${n}ms`;
  }
  for (const [unit, bytes] of [["TiB", 1024 ** 4], ["GiB", 1024 ** 3], ["MiB", 1024 ** 2], ["KiB", 1024]] as const) {
    if (n % bytes === 0) return `${n / bytes}${unit}`;
  }
  return `${n}B`;
}

/** The canonical text of a set of limits (`""` when none is set); `parseLimits` reads it back unchanged. */
export function formatLimits(limits: ResourceLimits): string {
  return LIMIT_NAMES.filter((name) => limits[KEYS[name]] !== undefined)
    .map((name) => `${name}=${formatValue(name, limits[KEYS[name]]!)}`)
    .join(",");
}

/** True when at least one limit is set. */
export function hasLimits(limits: ResourceLimits | undefined): limits is ResourceLimits {
  return limits !== undefined && LIMIT_NAMES.some((name) => limits[KEYS[name]] !== undefined);
}
