// @klbr/host: the klbr runtime daemon, composed from the @klbr packages.

// The runtime
/** The host: durable log, hooks worker, workbenches; start it with Host.start(options). */
export { Host } from "./runtime/host";
export { ROOT_SESSION } from "./runtime/ids";
export { effectiveAttention } from "./runtime/wakes";
export type { ExecutionReport } from "./runtime/completion";
export type { HostOptions } from "./runtime/host-options";
/** The built-in contract text and the instruction sources a header pins. */
export { CONTRACT_TEXT, instructionSources, type InstructionSource } from "./runtime/contract";

// The durable log
/** Open the SQLite log (WAL) and apply the host's migrations. */
export { HOST_MIGRATIONS_TABLE, hostMigrationsFolder, migrateHostDb, openSqlite, type HostDb } from "./db/open";
/** The log as `klbr log` prints it. */
export { readLog, type LogEntry } from "./store/log-view";
export { sessionAgenda, type SessionAgenda } from "./store/agenda";
/** A session's pending peer requests in both directions (for the frontier block). */
export { openPeerRequests, type OpenPeerRequest } from "./store/peer-requests";

// Host requests
/** The methods this host serves, and the families it answers `unsupported`. */
export { HANDLERS, UNSUPPORTED_PREFIXES, dispatch } from "./requests";
/** A host reply error with its snake_case code. */
export { ReplyError } from "./requests/errors";
/** What request handlers and subscribers see. */
export type { HostServices, LiveExecution, Notification, RequestContext } from "./requests/context";

// The daemon's control socket
/** Serve and connect to the daemon's control socket. */
export { serveControl, checkControlSocketPath } from "./control/server";
export { ControlClient } from "./control/client";

// Paths and errors
/** Data directory defaults and layout. */
export { dataLayout, defaultDataDir, defaultPythonDir, type DataLayout } from "./paths";
/** Host-level errors with stable codes. */
export { HostError, type HostErrorCode } from "./errors";
