import { LimitsSyntaxError, parseLimits, type MechanismKind, type ResourceLimits } from "@klbr/supervisor";
import { HostError } from "../errors";

/** The limits a host applies (C17), and the mechanism it must use (`auto`: the best it can make). */
export interface LimitSettings {
  limits: ResourceLimits;
  mechanism: "auto" | MechanismKind;
}

/** What a caller gives (CLI flags, HostOptions); unset ones come from the environment. */
export interface LimitChoice {
  /** `--limit` values (repeatable), or the parsed limits. */
  limit?: readonly string[] | ResourceLimits;
  /** `auto`, `cgroup2`, `cgroup1` or `rlimit`: forcing one is for tests and for hosts that must not touch cgroups. */
  mechanism?: string;
}

const MECHANISMS = new Set(["auto", "cgroup2", "cgroup1", "rlimit"]);

/**
 * Resolve the limits: `--limit` (or HostOptions.limits) first, else KLBR_LIMITS; the mechanism from
 * KLBR_LIMITS_MECHANISM (default auto). A text that does not parse is LIMITS_INVALID (exit 64),
 * naming the bad part.
 */
export function limitSettings(choice: LimitChoice = {}, env: NodeJS.ProcessEnv = process.env): LimitSettings {
  let limits: ResourceLimits;
  const given = choice.limit;
  try {
    if (given !== undefined && !Array.isArray(given)) limits = given as ResourceLimits;
    else if (given !== undefined && (given as readonly string[]).length > 0) limits = parseLimits(given as readonly string[]);
    else limits = parseLimits(env.KLBR_LIMITS ?? "");
  } catch (err) {
    if (err instanceof LimitsSyntaxError) {
      const from = given !== undefined && Array.isArray(given) && given.length > 0 ? "--limit" : "KLBR_LIMITS";
      throw new HostError("LIMITS_INVALID", `${from} ${err.message}`);
    }
    throw err;
  }
  const mechanism = choice.mechanism ?? (env.KLBR_LIMITS_MECHANISM || "auto");
  if (!MECHANISMS.has(mechanism)) {
    throw new HostError("LIMITS_INVALID", `the limits mechanism must be auto, cgroup2, cgroup1 or rlimit, got ${JSON.stringify(mechanism)} (KLBR_LIMITS_MECHANISM)`);
  }
  return { limits, mechanism: mechanism as LimitSettings["mechanism"] };
}
