// Resource limits and accounting (C17): the mechanism, apart from the supervisor's start path.
export { formatLimits, formatValue, hasLimits, LIMIT_MINIMUMS, LIMIT_NAMES, LimitsSyntaxError, parseLimits } from "./spec.js";
export type { LimitName, LimitReason, ResourceLimits } from "./spec.js";
export { LimitsUnavailableError, MECHANISM_LABELS, prepareLimits, rlimitsFor } from "./mechanism.js";
export type { GuardLimits, GuardRlimits, LimitsMechanism, MechanismKind, PrepareOptions } from "./mechanism.js";
export type { GroupMark, WorkerGroup } from "./group.js";
export { markGroup } from "./group.js";
export { cgroupPlaces, findCgroups } from "./discover.js";
export type { CgroupPlaces } from "./discover.js";
export { withGuardLimits } from "./guard-args.js";
export { watchCpu } from "./cpu-watch.js";
export { cpuVerdict, limitVerdict } from "./verdict.js";
export type { ExitSeen, LimitVerdict } from "./verdict.js";
export { GroupMeter, ProcMeter } from "./usage.js";
export { TreeMeter } from "./tree-meter.js";
export type { CellUsage, UsageMeter } from "./usage.js";
export { WorkerLimits } from "./worker-limits.js";
