import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

// Hosts and leases (C21) live in their own file; re-exported so drizzle-kit and HostDb see them.
export { hosts, leases } from "./schema-hosts";
// Display blobs (C20) too.
export { blobs } from "./schema-blobs";
// Releases and managed skills by digest (C21), their bytes in blobs.
export { managedSkills, releases } from "./schema-artifacts";

/**
 * The host's durable log. Every table is append-mostly: a row is written when the host
 * observes something, and updated only to close it (an execution ends, a wait wakes).
 * Everything the operator or a model is told is derived from these rows.
 */

/** Operator-lane events: inputs that arrived (in) and messages confirmed to the operator (out). */
export const events = sqliteTable(
  "events",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    sessionId: text("session_id").notNull(),
    lane: text("lane").notNull(),
    direction: text("direction", { enum: ["in", "out"] }).notNull(),
    source: text("source").notNull(),
    receivedAtMs: integer("received_at_ms").notNull(),
    payload: text("payload", { mode: "json" }).notNull(),
    /** For inputs: {hook, effective} attention decisions; null for outbound messages. */
    attention: text("attention", { mode: "json" }),
    /** For inputs: set when a wake or a cell took the input into account. */
    consumedAtMs: integer("consumed_at_ms"),
    effectId: text("effect_id"),
  },
  (t) => [index("events_session_pending").on(t.sessionId, t.direction, t.consumedAtMs)],
);

/** Host effects requested by cells, with their receipts. */
export const effects = sqliteTable(
  "effects",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    executionId: text("execution_id").notNull(),
    requestId: text("request_id").notNull(),
    kind: text("kind").notNull(),
    text: text("text").notNull(),
    status: text("status", { enum: ["confirmed", "held"] }).notNull(),
    eventId: integer("event_id"),
    reason: text("reason"),
    review: text("review", { mode: "json" }),
    hooksRevision: text("hooks_revision"),
    createdAtMs: integer("created_at_ms").notNull(),
  },
  (t) => [uniqueIndex("effects_identity").on(t.executionId, t.requestId)],
);

/** One row per cell; closed with its status, outputs and the rung that ended an interrupt. */
export const executions = sqliteTable(
  "executions",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    generation: text("generation").notNull(),
    code: text("code").notNull(),
    status: text("status", {
      enum: ["running", "ok", "error", "yielded", "interrupted", "failed"],
    }).notNull(),
    output: text("output", { mode: "json" }),
    truncatedBytes: integer("truncated_bytes"),
    error: text("error"),
    endedBy: text("ended_by"),
    failure: text("failure", { mode: "json" }),
    startedAtMs: integer("started_at_ms").notNull(),
    endedAtMs: integer("ended_at_ms"),
    /** CPU time of the worker's tree over the cell (C17); null where the mechanism cannot measure it. */
    cpuMs: integer("cpu_ms"),
    /** Peak resident memory of the worker's tree over the cell (C17); null where not measurable. */
    peakRssBytes: integer("peak_rss_bytes"),
    /** Who ran it: "exec" (klbr exec/repl), "model" (a model turn's cell), "mcp", "web"...; null on rows older than the column. */
    origin: text("origin"),
    /** The cell's rich displays in order (C20): a DisplayRef list (store/displays.ts); null when it showed none. */
    displays: text("displays", { mode: "json" }),
    /** Displays past the 32 a cell may show (C20): the worker's count plus any the host could not list; null while running or on older rows. */
    displaysDropped: integer("displays_dropped"),
  },
  // executions_session: a session's cells in order, a page at a time (the web view, C23), without reading every row.
  (t) => [index("executions_status").on(t.status), index("executions_session").on(t.sessionId, t.startedAtMs)],
);

/** Every host request a cell made, and the reply it got. */
export const hostRequests = sqliteTable(
  "host_requests",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    executionId: text("execution_id").notNull(),
    requestId: text("request_id").notNull(),
    method: text("method").notNull(),
    request: text("request", { mode: "json" }).notNull(),
    reply: text("reply", { mode: "json" }),
    requestedAtMs: integer("requested_at_ms").notNull(),
    repliedAtMs: integer("replied_at_ms"),
  },
  (t) => [index("host_requests_execution").on(t.executionId)],
);

/** Durable waits: no Python continuation is kept, only the deadline and how it ended. */
export const waits = sqliteTable(
  "waits",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    executionId: text("execution_id").notNull(),
    reason: text("reason").notNull(),
    seconds: integer("seconds", { mode: "number" }),
    deadlineMs: integer("deadline_ms"),
    pendingInput: integer("pending_input", { mode: "boolean" }).notNull(),
    /** `superseded`: closed by a newer wait of the same session (C8); `woken_by` names it. */
    state: text("state", { enum: ["waiting", "woken", "superseded"] }).notNull(),
    wokenBy: text("woken_by"),
    wokenAtMs: integer("woken_at_ms"),
    createdAtMs: integer("created_at_ms").notNull(),
  },
  (t) => [index("waits_state").on(t.state)],
);

/** kernel.reset: a new workbench generation and the skill set revision it loaded. */
export const kernelResets = sqliteTable("kernel_resets", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  sessionId: text("session_id").notNull(),
  generation: text("generation").notNull(),
  skillsRevision: text("skills_revision"),
  pid: integer("pid"),
  reason: text("reason").notNull(),
  atMs: integer("at_ms").notNull(),
});

/** Header pins and revisions, written once and replayed like any other record. */
export const headerRecords = sqliteTable(
  "header_records",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    sessionId: text("session_id").notNull(),
    type: text("type", { enum: ["header_pin", "header_revision"] }).notNull(),
    digest: text("digest").notNull(),
    record: text("record", { mode: "json" }).notNull(),
    atMs: integer("at_ms").notNull(),
  },
  (t) => [index("header_records_session").on(t.sessionId, t.id)],
);

/** Host-level incidents worth keeping: worker deaths, recoveries, hook failures. */
export const incidents = sqliteTable("incidents", {
  id: integer("id").primaryKey({ autoIncrement: true }),
  kind: text("kind").notNull(),
  detail: text("detail", { mode: "json" }).notNull(),
  atMs: integer("at_ms").notNull().default(sql`(unixepoch() * 1000)`),
});

/** Maintenance work items (C11): why something should change and on what evidence; open until assessed closed. */
export const workItems = sqliteTable(
  "work_items",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    executionId: text("execution_id").notNull(),
    requestId: text("request_id").notNull(),
    purpose: text("purpose").notNull(),
    reason: text("reason").notNull(),
    evidenceRefs: text("evidence_refs", { mode: "json" }).$type<string[]>().notNull(),
    status: text("status", { enum: ["open", "closed"] }).notNull(),
    /** The last assessment's outcome (null until assessed). */
    outcome: text("outcome"),
    createdAtMs: integer("created_at_ms").notNull(),
    closedAtMs: integer("closed_at_ms"),
  },
  (t) => [uniqueIndex("work_items_identity").on(t.executionId, t.requestId), index("work_items_status").on(t.status, t.sessionId)],
);

/** Every assessment of a work item, with the status it left the item in. */
export const workItemAssessments = sqliteTable(
  "work_item_assessments",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workItemId: text("work_item_id").notNull(),
    sessionId: text("session_id").notNull(),
    executionId: text("execution_id").notNull(),
    requestId: text("request_id").notNull(),
    outcome: text("outcome", { enum: ["no-change", "changed", "abandoned", "deferred"] }).notNull(),
    status: text("status", { enum: ["open", "closed"] }).notNull(),
    atMs: integer("at_ms").notNull(),
  },
  (t) => [index("work_item_assessments_item").on(t.workItemId)],
);

/** Orientation candidates (C11): text a session proposes as the instruction source `target` for a scope. */
export const orientationCandidates = sqliteTable(
  "orientation_candidates",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    executionId: text("execution_id").notNull(),
    requestId: text("request_id").notNull(),
    target: text("target").notNull(),
    scopeKind: text("scope_kind", { enum: ["global", "session"] }).notNull(),
    scopeSessionId: text("scope_session_id"),
    text: text("text").notNull(),
    digest: text("digest").notNull(),
    status: text("status", { enum: ["staged", "adopted"] }).notNull(),
    stagedAtMs: integer("staged_at_ms").notNull(),
  },
  (t) => [index("orientation_candidates_scope").on(t.scopeKind, t.scopeSessionId, t.status)],
);

/** Every adoption; the newest per target and scope is that scope's instruction source. */
export const orientationAdoptions = sqliteTable(
  "orientation_adoptions",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    operationId: text("operation_id").notNull(),
    candidateId: text("candidate_id").notNull(),
    target: text("target").notNull(),
    scopeKind: text("scope_kind", { enum: ["global", "session"] }).notNull(),
    scopeSessionId: text("scope_session_id"),
    sessionId: text("session_id").notNull(),
    executionId: text("execution_id").notNull(),
    requestId: text("request_id").notNull(),
    step: integer("step").notNull(),
    /** The reply as sent, so a repeat of the operation gets it byte for byte. */
    reply: text("reply", { mode: "json" }).notNull(),
    adoptedAtMs: integer("adopted_at_ms").notNull(),
  },
  (t) => [
    uniqueIndex("orientation_adoptions_operation").on(t.operationId),
    index("orientation_adoptions_target").on(t.scopeKind, t.scopeSessionId, t.target, t.id),
  ],
);

/** Peers (C13): a session opened by another session of this host, with its own workbench. */
export const peers = sqliteTable(
  "peers",
  {
    /** The peer id the opener addresses it by. */
    id: text("id").primaryKey(),
    /** The peer's own session: its workbench, header and transcript. */
    sessionId: text("session_id").notNull(),
    openerSessionId: text("opener_session_id").notNull(),
    openerExecutionId: text("opener_execution_id").notNull(),
    mode: text("mode").notNull(),
    evidence: text("evidence", { mode: "json" }).notNull(),
    status: text("status", { enum: ["open", "stopping", "stopped"] }).notNull(),
    openedAtMs: integer("opened_at_ms").notNull(),
    /** Set by peer.stop: whether it drains (after the current cell) or hard-stops. */
    stopDrain: integer("stop_drain", { mode: "boolean" }),
    stopRequestedAtMs: integer("stop_requested_at_ms"),
    /** How the stop ended: `drain`, `hard`, or `host_restart` when a crash cut a drain short. */
    stoppedBy: text("stopped_by"),
    stoppedAtMs: integer("stopped_at_ms"),
  },
  (t) => [uniqueIndex("peers_session").on(t.sessionId), index("peers_opener").on(t.openerSessionId, t.openedAtMs), index("peers_status").on(t.status)],
);

/** Peer requests (C13): one per (opener session, request id); answered or cancelled at most once. */
export const peerRequests = sqliteTable(
  "peer_requests",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    requestId: text("request_id").notNull(),
    peerId: text("peer_id").notNull(),
    fromSessionId: text("from_session_id").notNull(),
    toSessionId: text("to_session_id").notNull(),
    content: text("content").notNull(),
    evidence: text("evidence", { mode: "json" }).notNull(),
    status: text("status", { enum: ["pending", "answered", "cancelled"] }).notNull(),
    /** The input event the request became in the peer's session. */
    eventId: integer("event_id").notNull(),
    sentByExecutionId: text("sent_by_execution_id").notNull(),
    sentAtMs: integer("sent_at_ms").notNull(),
    result: text("result", { mode: "json" }),
    /** The input event the answer (or a cancel by the peer) became in the opener's session. */
    resultEventId: integer("result_event_id"),
    answeredByExecutionId: text("answered_by_execution_id"),
    answeredAtMs: integer("answered_at_ms"),
    /** Who cancelled: `opener`, `peer`, or `stop` (a peer.stop cancelled what was pending). */
    cancelledBy: text("cancelled_by"),
    cancelledByExecutionId: text("cancelled_by_execution_id"),
    cancelledAtMs: integer("cancelled_at_ms"),
  },
  (t) => [
    uniqueIndex("peer_requests_identity").on(t.fromSessionId, t.requestId),
    index("peer_requests_to").on(t.toSessionId, t.status),
    index("peer_requests_peer").on(t.peerId, t.status),
  ],
);

/**
 * A session's transcript (C10): one row per record in the order the model reads them. A row
 * names where its content lives (`ref`: an event id, a model request id, an execution id, a
 * header record id); `detail` holds what has no other home (a refusal's reason).
 */
export const transcriptRecords = sqliteTable(
  "transcript_records",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    sessionId: text("session_id").notNull(),
    /** `turn_end`: a turn the host ended for the model (the operator stopped it); `ref` is the wait. */
    kind: text("kind", { enum: ["input", "reply", "cell", "refusal", "observation", "turn_end"] }).notNull(),
    ref: text("ref").notNull(),
    /** For a cell or a refusal: the model request whose reply made the call. */
    requestId: text("request_id"),
    callId: text("call_id"),
    detail: text("detail", { mode: "json" }),
    atMs: integer("at_ms").notNull(),
  },
  (t) => [index("transcript_records_session").on(t.sessionId, t.seq), index("transcript_records_ref").on(t.kind, t.ref)],
);

/** Every model request (C10): what was sent (digest, bytes shared with the previous), how it ended, usage as reported. */
export const modelRequests = sqliteTable(
  "model_requests",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    turnId: text("turn_id").notNull(),
    route: text("route").notNull(),
    api: text("api").notNull(),
    model: text("model").notNull(),
    /** The route as it was (no key): what the body was built with, for re-assembly. */
    profile: text("profile", { mode: "json" }).notNull(),
    /** The header pin the request ran under. */
    headerRecordId: integer("header_record_id").notNull(),
    frontierId: text("frontier_id"),
    /** The last transcript record the request includes. */
    throughSeq: integer("through_seq").notNull(),
    bodyDigest: text("body_digest").notNull(),
    bodyBytes: integer("body_bytes").notNull(),
    sharedPrefixBytes: integer("shared_prefix_bytes").notNull(),
    status: text("status", { enum: ["running", "ok", "error"] }).notNull(),
    error: text("error", { mode: "json" }),
    retries: integer("retries").notNull().default(0),
    /** The @klbr/usage record; null when the route reported none. */
    usage: text("usage", { mode: "json" }),
    /** The reply exactly as received (text, tool calls, stop reason). */
    reply: text("reply", { mode: "json" }),
    /** The model the reply named (C18 gen_ai.response.model), which may differ from the route's; null when it named none. */
    responseModel: text("response_model"),
    startedAtMs: integer("started_at_ms").notNull(),
    endedAtMs: integer("ended_at_ms"),
  },
  (t) => [index("model_requests_session").on(t.sessionId, t.startedAtMs), index("model_requests_status").on(t.status)],
);

/** Frontiers (C12): the durable point a session's transcript restarts from at a fold. */
export const frontiers = sqliteTable(
  "frontiers",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    coversThrough: integer("covers_through").notNull(),
    block: text("block").notNull(),
    reason: text("reason", { enum: ["selected", "budget"] }).notNull(),
    executionId: text("execution_id"),
    createdAtMs: integer("created_at_ms").notNull(),
    /** Set when a request first ran under it (the header was pinned anew then). */
    installedAtMs: integer("installed_at_ms"),
    /** The pin the installation wrote. */
    headerRecordId: integer("header_record_id"),
  },
  (t) => [index("frontiers_session").on(t.sessionId, t.createdAtMs)],
);

/** Remote namespaces (C14): one per session and target while open; generations come and go under it. */
export const remoteNamespaces = sqliteTable(
  "remote_namespaces",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    target: text("target").notNull(),
    status: text("status", { enum: ["open", "closed"] }).notNull(),
    openedByExecutionId: text("opened_by_execution_id").notNull(),
    openedAtMs: integer("opened_at_ms").notNull(),
    /** The execution that closed it (remote.close), or `host` reasons. */
    closedBy: text("closed_by"),
    closedAtMs: integer("closed_at_ms"),
  },
  (t) => [index("remote_namespaces_session").on(t.sessionId, t.target, t.status)],
);

/** One remote worker generation: where it ran, what it cost to start, how it ended. */
export const remoteGenerations = sqliteTable(
  "remote_generations",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    namespaceId: text("namespace_id").notNull(),
    generation: text("generation").notNull(),
    target: text("target").notNull(),
    remotePid: integer("remote_pid").notNull(),
    /** The local ssh process the supervisor watches. */
    localPid: integer("local_pid").notNull(),
    runtimeDigest: text("runtime_digest").notNull(),
    /** Whether the runtime was copied for this generation (cold) or found there (warm). */
    runtimeCopied: integer("runtime_copied", { mode: "boolean" }).notNull(),
    python: text("python").notNull(),
    startedAtMs: integer("started_at_ms").notNull(),
    endedAtMs: integer("ended_at_ms"),
    /** The supervisor's exit reason (`shutdown`, `worker_exited`, `interrupt_escalated`, ...) or `host_restart`. */
    endReason: text("end_reason"),
  },
  (t) => [uniqueIndex("remote_generations_identity").on(t.namespaceId, t.generation)],
);

/** remote.call operations, idempotent by (namespace, operation id); closed with the completion record sent. */
export const remoteOperations = sqliteTable(
  "remote_operations",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    namespaceId: text("namespace_id").notNull(),
    generation: text("generation").notNull(),
    operationId: text("operation_id").notNull(),
    operation: text("operation").notNull(),
    code: text("code").notNull(),
    /** The local cell whose request made it. */
    executionId: text("execution_id").notNull(),
    status: text("status", { enum: ["running", "ok", "error", "interrupted", "failed"] }).notNull(),
    completion: text("completion", { mode: "json" }),
    endedBy: text("ended_by"),
    startedAtMs: integer("started_at_ms").notNull(),
    endedAtMs: integer("ended_at_ms"),
  },
  (t) => [uniqueIndex("remote_operations_identity").on(t.namespaceId, t.operationId), index("remote_operations_status").on(t.status)],
);
