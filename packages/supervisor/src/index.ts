// @klbr/supervisor: spawn, handshake, exchange, interrupt and hard stop of klbr workers.

// Starting a worker
export { startWorker } from "./start.js";
export { startSpare } from "./spare.js";
export type { SpareOptions, SpareWorker } from "./spare.js";
export { resolvePython } from "./python.js";
export { minimalEnv, MINIMAL_ENV_NAMES } from "./minimal-env.js";
export type {
  ExecuteOptions,
  HostReplyEvent,
  HostRequestContext,
  HostRequestHandler,
  StartWorkerOptions,
  StrayRequestHandler,
  WorkerTransport,
  Worker,
  WorkerRole,
  WorkerState,
} from "./options.js";
export type { WorkerSandbox } from "./options.js";
export { LIVE_OUTPUT_FLAG } from "./live-output.js";
export type { CellOutput, OutputListener } from "./live-output.js";
export { DISPLAY_FLAG } from "./display.js";
export type { CellDisplay, DisplayListener } from "./display.js";
export { DEFAULTS } from "./options.js";

// Completions and exits
export type {
  CellCompletion,
  CompletionBase,
  EndedBy,
  ExitInfo,
  FailedCompletion,
  HookCompletion,
  HookValueCompletion,
  HostInterruptedCompletion,
  InterruptOutcome,
  InterruptRung,
  WorkerCellCompletion,
  WorkerExit,
} from "./completion.js";

// Wire types the API speaks in (from @klbr/envelope)
export type { CellResult, HelloMessage, HookInput, HookSlot, HostRequest, HookValue } from "./wire.js";

// Process trees
export { killTree, descendants, recordRoot } from "./tree.js";
export type { KnownProcs } from "./tree.js";
export { treeTag, killTagged } from "./tagged.js";
export { guardArgv, readGuardStatus, watchGuard, GUARD_SCRIPT, GUARD_STATUS_FD } from "./guard.js";
export type { GuardReport, GuardStatus } from "./guard.js";
export { guardLaunch, launcherEnv, sendCommandEnv, GUARD_ENV_FD } from "./guard-launch.js";
export type { EnvHandoff, GuardLaunch } from "./guard-launch.js";
export type { TreeTag } from "./tagged.js";

// Limits
export { MAX_SOCKET_PATH_BYTES, sweepPrivateDirs } from "./private-dir.js";
export { TAIL_BYTES } from "./tail.js";

// Errors
export { SupervisorError, isSupervisorError } from "./errors.js";
export type { SupervisorErrorCode, OutputTails } from "./errors.js";

// Resource limits and accounting (C17)
export {
  cpuVerdict,
  formatLimits,
  formatValue,
  hasLimits,
  LIMIT_MINIMUMS,
  LIMIT_NAMES,
  limitVerdict,
  LimitsSyntaxError,
  LimitsUnavailableError,
  markGroup,
  MECHANISM_LABELS,
  parseLimits,
  prepareLimits,
  rlimitsFor,
  watchCpu,
  withGuardLimits,
} from "./limits/index.js";
export type {
  CellUsage,
  GuardLimits,
  LimitName,
  LimitReason,
  LimitsMechanism,
  LimitVerdict,
  MechanismKind,
  ResourceLimits,
  WorkerGroup,
} from "./limits/index.js";
