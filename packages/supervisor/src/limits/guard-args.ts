import type { GuardLimits } from "./mechanism.js";

/** The guard's argv with `--limits JSON` among its options (before `--`); unchanged when there is nothing to apply. */
export function withGuardLimits(guard: readonly string[], limits: GuardLimits | undefined): string[] {
  if (!limits || (limits.join.length === 0 && Object.keys(limits.rlimits).length === 0)) return [...guard];
  const at = guard.indexOf("--");
  if (at < 0) throw new RangeError("the guard's argv has no -- before the command");
  return [...guard.slice(0, at), "--limits", JSON.stringify(limits), ...guard.slice(at)];
}
