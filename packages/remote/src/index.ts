// @klbr/remote: klbr workers on other machines, over the system's OpenSSH client (C14).

// Targets (<data>/targets.json)
export { parseTarget, parseTargets, findTarget, withTarget, withoutTarget } from "./targets.js";
export type { SshEndpoint, Target, TargetsFile } from "./targets.js";
export { readTargets, writeTargets, targetsPath } from "./targets-file.js";

// The ssh command line
export { sshArgv, shellQuote, shellJoin } from "./ssh-argv.js";
export type { SocketForward, SshArgvOptions } from "./ssh-argv.js";
export { sshRun, sshFailure } from "./ssh-run.js";
export type { SshResult } from "./ssh-run.js";

// The runtime copy and the remote worker
export { collectRuntime, bundleDigest, encodeBundle } from "./bundle.js";
export type { RuntimeBundle } from "./bundle.js";
export { ensureRuntime, installScript } from "./install.js";
export type { InstalledRuntime } from "./install.js";
export { probeTarget } from "./probe.js";
export type { ProbeResult } from "./probe.js";
export { startRemoteWorker, openRemoteWorker, keeperLimitsArgs, remoteWorkerCommand, remoteSocketPath, keeperPid, KEEPER_PID_PREFIX, RUNTIME_ABSENT } from "./start.js";
export type { OpenRemoteOptions, RemoteWorker, RemoteWorkerOptions } from "./start.js";

// Errors
export { RemoteError, isRemoteError } from "./errors.js";
export type { RemoteErrorCode } from "./errors.js";
