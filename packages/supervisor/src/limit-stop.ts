import type { LimitVerdict } from "./limits/index.js";
import type { StopInfo } from "./records.js";

/**
 * The stop of a generation a limit ended (C17): the limit is the reason, and the namespace is
 * gone with the tree, which the detail says (the next generation's `kernel.reset` names it).
 */
export function limitStop(verdict: LimitVerdict): StopInfo {
  return { reason: verdict.reason, detail: `${verdict.detail}; the namespace is gone`, kind: "invalidated" };
}

/**
 * The stop of a dead worker: for a death the host did not ask for (`invalidated`), a memory, cpu
 * or procs limit the mechanism recorded is its reason. The verdict is read only then (it reads
 * the group's counters). A file limit is not one of C17's stop reasons: a write past it kills
 * one process, and the exit already says so.
 */
export function stopAfterDeath(stop: StopInfo, readVerdict: () => LimitVerdict | undefined): StopInfo {
  if (stop.kind !== "invalidated") return stop;
  const verdict = readVerdict();
  if (!verdict || verdict.reason === "file_limit" || verdict.reason === stop.reason) return stop;
  return limitStop(verdict);
}
