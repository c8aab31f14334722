import { sql } from "drizzle-orm";
import { bigint, boolean, customType, doublePrecision, index, json, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import type { ReleaseFile } from "./schema-artifacts";

/**
 * The host's durable log in PostgreSQL (C21): the same tables, columns and indexes as the SQLite
 * schema in `schema.ts` (test/pg-schema.test.ts fails on any difference), with PostgreSQL types:
 * - every SQLite integer is a `bigint` (`mode: "number"`): ms timestamps and byte counts pass 2^31;
 * - SQLite's boolean integers are `boolean`;
 * - JSON is `json`, not `jsonb`: `json` keeps the text as written (key order, spacing), as SQLite's
 *   text does, and some rows are promised back byte for byte (an adoption's reply);
 * - autoincrement keys are identity columns, `by default` so rows copied from SQLite keep their ids;
 * - SQLite's blobs (buffer mode) are `bytea`, a custom type (drizzle-orm 0.44 has no bytea builder).
 * Migrations: drizzle-kit generates them into `drizzle-pg/` (`pnpm db:generate:pg`).
 */

/** Operator-lane events: inputs that arrived (in) and messages confirmed to the operator (out). */
export const events = pgTable(
  "events",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    sessionId: text("session_id").notNull(),
    lane: text("lane").notNull(),
    direction: text("direction", { enum: ["in", "out"] }).notNull(),
    source: text("source").notNull(),
    receivedAtMs: bigint("received_at_ms", { mode: "number" }).notNull(),
    payload: json("payload").notNull(),
    /** For inputs: {hook, effective} attention decisions; null for outbound messages. */
    attention: json("attention"),
    /** For inputs: set when a wake or a cell took the input into account. */
    consumedAtMs: bigint("consumed_at_ms", { mode: "number" }),
    effectId: text("effect_id"),
  },
  (t) => [index("events_session_pending").on(t.sessionId, t.direction, t.consumedAtMs)],
);

/** Host effects requested by cells, with their receipts. */
export const effects = pgTable(
  "effects",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    executionId: text("execution_id").notNull(),
    requestId: text("request_id").notNull(),
    kind: text("kind").notNull(),
    text: text("text").notNull(),
    status: text("status", { enum: ["confirmed", "held"] }).notNull(),
    eventId: bigint("event_id", { mode: "number" }),
    reason: text("reason"),
    review: json("review"),
    hooksRevision: text("hooks_revision"),
    createdAtMs: bigint("created_at_ms", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("effects_identity").on(t.executionId, t.requestId)],
);

/** One row per cell; closed with its status, outputs and the rung that ended an interrupt. */
export const executions = pgTable(
  "executions",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    generation: text("generation").notNull(),
    code: text("code").notNull(),
    status: text("status", {
      enum: ["running", "ok", "error", "yielded", "interrupted", "failed"],
    }).notNull(),
    output: json("output"),
    truncatedBytes: bigint("truncated_bytes", { mode: "number" }),
    error: text("error"),
    endedBy: text("ended_by"),
    failure: json("failure"),
    startedAtMs: bigint("started_at_ms", { mode: "number" }).notNull(),
    endedAtMs: bigint("ended_at_ms", { mode: "number" }),
    /** CPU time of the worker's tree over the cell (C17); null where the mechanism cannot measure it. */
    cpuMs: bigint("cpu_ms", { mode: "number" }),
    /** Peak resident memory of the worker's tree over the cell (C17); null where not measurable. */
    peakRssBytes: bigint("peak_rss_bytes", { mode: "number" }),
    /** Who ran it: "exec" (klbr exec/repl), "model" (a model turn's cell), "mcp", "web"...; null on rows older than the column. */
    origin: text("origin"),
    /** The cell's rich displays in order (C20): a DisplayRef list (store/displays.ts); null when it showed none. */
    displays: json("displays"),
    /** Displays past the 32 a cell may show (C20): the worker's count plus any the host could not list; null while running or on older rows. */
    displaysDropped: bigint("displays_dropped", { mode: "number" }),
  },
  // executions_session: a session's cells in order, a page at a time (the web view, C23), without reading every row.
  (t) => [index("executions_status").on(t.status), index("executions_session").on(t.sessionId, t.startedAtMs)],
);

/** Every host request a cell made, and the reply it got. */
export const hostRequests = pgTable(
  "host_requests",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    executionId: text("execution_id").notNull(),
    requestId: text("request_id").notNull(),
    method: text("method").notNull(),
    request: json("request").notNull(),
    reply: json("reply"),
    requestedAtMs: bigint("requested_at_ms", { mode: "number" }).notNull(),
    repliedAtMs: bigint("replied_at_ms", { mode: "number" }),
  },
  (t) => [index("host_requests_execution").on(t.executionId)],
);

/** Durable waits: no Python continuation is kept, only the deadline and how it ended. */
export const waits = pgTable(
  "waits",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    executionId: text("execution_id").notNull(),
    reason: text("reason").notNull(),
    /** Fractional (`runtime.wait(0.05)`): SQLite's integer column keeps a REAL as given; here it is a double. */
    seconds: doublePrecision("seconds"),
    deadlineMs: bigint("deadline_ms", { mode: "number" }),
    pendingInput: boolean("pending_input").notNull(),
    /** `superseded`: closed by a newer wait of the same session (C8); `woken_by` names it. */
    state: text("state", { enum: ["waiting", "woken", "superseded"] }).notNull(),
    wokenBy: text("woken_by"),
    wokenAtMs: bigint("woken_at_ms", { mode: "number" }),
    createdAtMs: bigint("created_at_ms", { mode: "number" }).notNull(),
  },
  (t) => [index("waits_state").on(t.state)],
);

/** kernel.reset: a new workbench generation and the skill set revision it loaded. */
export const kernelResets = pgTable("kernel_resets", {
  id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
  sessionId: text("session_id").notNull(),
  generation: text("generation").notNull(),
  skillsRevision: text("skills_revision"),
  pid: bigint("pid", { mode: "number" }),
  reason: text("reason").notNull(),
  atMs: bigint("at_ms", { mode: "number" }).notNull(),
});

/** Header pins and revisions, written once and replayed like any other record. */
export const headerRecords = pgTable(
  "header_records",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    sessionId: text("session_id").notNull(),
    type: text("type", { enum: ["header_pin", "header_revision"] }).notNull(),
    digest: text("digest").notNull(),
    record: json("record").notNull(),
    atMs: bigint("at_ms", { mode: "number" }).notNull(),
  },
  (t) => [index("header_records_session").on(t.sessionId, t.id)],
);

/** Host-level incidents worth keeping: worker deaths, recoveries, hook failures. */
export const incidents = pgTable("incidents", {
  id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
  kind: text("kind").notNull(),
  detail: json("detail").notNull(),
  atMs: bigint("at_ms", { mode: "number" }).notNull().default(sql`((extract(epoch from now()) * 1000)::bigint)`),
});

/** Maintenance work items (C11): why something should change and on what evidence; open until assessed closed. */
export const workItems = pgTable(
  "work_items",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    executionId: text("execution_id").notNull(),
    requestId: text("request_id").notNull(),
    purpose: text("purpose").notNull(),
    reason: text("reason").notNull(),
    evidenceRefs: json("evidence_refs").$type<string[]>().notNull(),
    status: text("status", { enum: ["open", "closed"] }).notNull(),
    /** The last assessment's outcome (null until assessed). */
    outcome: text("outcome"),
    createdAtMs: bigint("created_at_ms", { mode: "number" }).notNull(),
    closedAtMs: bigint("closed_at_ms", { mode: "number" }),
  },
  (t) => [uniqueIndex("work_items_identity").on(t.executionId, t.requestId), index("work_items_status").on(t.status, t.sessionId)],
);

/** Every assessment of a work item, with the status it left the item in. */
export const workItemAssessments = pgTable(
  "work_item_assessments",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    workItemId: text("work_item_id").notNull(),
    sessionId: text("session_id").notNull(),
    executionId: text("execution_id").notNull(),
    requestId: text("request_id").notNull(),
    outcome: text("outcome", { enum: ["no-change", "changed", "abandoned", "deferred"] }).notNull(),
    status: text("status", { enum: ["open", "closed"] }).notNull(),
    atMs: bigint("at_ms", { mode: "number" }).notNull(),
  },
  (t) => [index("work_item_assessments_item").on(t.workItemId)],
);

/** Orientation candidates (C11): text a session proposes as the instruction source `target` for a scope. */
export const orientationCandidates = pgTable(
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
    stagedAtMs: bigint("staged_at_ms", { mode: "number" }).notNull(),
  },
  (t) => [index("orientation_candidates_scope").on(t.scopeKind, t.scopeSessionId, t.status)],
);

/** Every adoption; the newest per target and scope is that scope's instruction source. */
export const orientationAdoptions = pgTable(
  "orientation_adoptions",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    operationId: text("operation_id").notNull(),
    candidateId: text("candidate_id").notNull(),
    target: text("target").notNull(),
    scopeKind: text("scope_kind", { enum: ["global", "session"] }).notNull(),
    scopeSessionId: text("scope_session_id"),
    sessionId: text("session_id").notNull(),
    executionId: text("execution_id").notNull(),
    requestId: text("request_id").notNull(),
    step: bigint("step", { mode: "number" }).notNull(),
    /** The reply as sent, so a repeat of the operation gets it byte for byte. */
    reply: json("reply").notNull(),
    adoptedAtMs: bigint("adopted_at_ms", { mode: "number" }).notNull(),
  },
  (t) => [
    uniqueIndex("orientation_adoptions_operation").on(t.operationId),
    index("orientation_adoptions_target").on(t.scopeKind, t.scopeSessionId, t.target, t.id),
  ],
);

/** Peers (C13): a session opened by another session of this host, with its own workbench. */
export const peers = pgTable(
  "peers",
  {
    /** The peer id the opener addresses it by. */
    id: text("id").primaryKey(),
    /** The peer's own session: its workbench, header and transcript. */
    sessionId: text("session_id").notNull(),
    openerSessionId: text("opener_session_id").notNull(),
    openerExecutionId: text("opener_execution_id").notNull(),
    mode: text("mode").notNull(),
    evidence: json("evidence").notNull(),
    status: text("status", { enum: ["open", "stopping", "stopped"] }).notNull(),
    openedAtMs: bigint("opened_at_ms", { mode: "number" }).notNull(),
    /** Set by peer.stop: whether it drains (after the current cell) or hard-stops. */
    stopDrain: boolean("stop_drain"),
    stopRequestedAtMs: bigint("stop_requested_at_ms", { mode: "number" }),
    /** How the stop ended: `drain`, `hard`, or `host_restart` when a crash cut a drain short. */
    stoppedBy: text("stopped_by"),
    stoppedAtMs: bigint("stopped_at_ms", { mode: "number" }),
  },
  (t) => [uniqueIndex("peers_session").on(t.sessionId), index("peers_opener").on(t.openerSessionId, t.openedAtMs), index("peers_status").on(t.status)],
);

/** Peer requests (C13): one per (opener session, request id); answered or cancelled at most once. */
export const peerRequests = pgTable(
  "peer_requests",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    requestId: text("request_id").notNull(),
    peerId: text("peer_id").notNull(),
    fromSessionId: text("from_session_id").notNull(),
    toSessionId: text("to_session_id").notNull(),
    content: text("content").notNull(),
    evidence: json("evidence").notNull(),
    status: text("status", { enum: ["pending", "answered", "cancelled"] }).notNull(),
    /** The input event the request became in the peer's session. */
    eventId: bigint("event_id", { mode: "number" }).notNull(),
    sentByExecutionId: text("sent_by_execution_id").notNull(),
    sentAtMs: bigint("sent_at_ms", { mode: "number" }).notNull(),
    result: json("result"),
    /** The input event the answer (or a cancel by the peer) became in the opener's session. */
    resultEventId: bigint("result_event_id", { mode: "number" }),
    answeredByExecutionId: text("answered_by_execution_id"),
    answeredAtMs: bigint("answered_at_ms", { mode: "number" }),
    /** Who cancelled: `opener`, `peer`, or `stop` (a peer.stop cancelled what was pending). */
    cancelledBy: text("cancelled_by"),
    cancelledByExecutionId: text("cancelled_by_execution_id"),
    cancelledAtMs: bigint("cancelled_at_ms", { mode: "number" }),
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
export const transcriptRecords = pgTable(
  "transcript_records",
  {
    seq: bigint("seq", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    sessionId: text("session_id").notNull(),
    /** `turn_end`: a turn the host ended for the model (the operator stopped it); `ref` is the wait. */
    kind: text("kind", { enum: ["input", "reply", "cell", "refusal", "observation", "turn_end"] }).notNull(),
    ref: text("ref").notNull(),
    /** For a cell or a refusal: the model request whose reply made the call. */
    requestId: text("request_id"),
    callId: text("call_id"),
    detail: json("detail"),
    atMs: bigint("at_ms", { mode: "number" }).notNull(),
  },
  (t) => [index("transcript_records_session").on(t.sessionId, t.seq), index("transcript_records_ref").on(t.kind, t.ref)],
);

/** Every model request (C10): what was sent (digest, bytes shared with the previous), how it ended, usage as reported. */
export const modelRequests = pgTable(
  "model_requests",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    turnId: text("turn_id").notNull(),
    route: text("route").notNull(),
    api: text("api").notNull(),
    model: text("model").notNull(),
    /** The route as it was (no key): what the body was built with, for re-assembly. */
    profile: json("profile").notNull(),
    /** The header pin the request ran under. */
    headerRecordId: bigint("header_record_id", { mode: "number" }).notNull(),
    frontierId: text("frontier_id"),
    /** The last transcript record the request includes. */
    throughSeq: bigint("through_seq", { mode: "number" }).notNull(),
    bodyDigest: text("body_digest").notNull(),
    bodyBytes: bigint("body_bytes", { mode: "number" }).notNull(),
    sharedPrefixBytes: bigint("shared_prefix_bytes", { mode: "number" }).notNull(),
    status: text("status", { enum: ["running", "ok", "error"] }).notNull(),
    error: json("error"),
    retries: bigint("retries", { mode: "number" }).notNull().default(0),
    /** The @klbr/usage record; null when the route reported none. */
    usage: json("usage"),
    /** The reply exactly as received (text, tool calls, stop reason). */
    reply: json("reply"),
    /** The model the reply named (C18 gen_ai.response.model), which may differ from the route's; null when it named none. */
    responseModel: text("response_model"),
    startedAtMs: bigint("started_at_ms", { mode: "number" }).notNull(),
    endedAtMs: bigint("ended_at_ms", { mode: "number" }),
  },
  (t) => [index("model_requests_session").on(t.sessionId, t.startedAtMs), index("model_requests_status").on(t.status)],
);

/** Frontiers (C12): the durable point a session's transcript restarts from at a fold. */
export const frontiers = pgTable(
  "frontiers",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    coversThrough: bigint("covers_through", { mode: "number" }).notNull(),
    block: text("block").notNull(),
    reason: text("reason", { enum: ["selected", "budget"] }).notNull(),
    executionId: text("execution_id"),
    createdAtMs: bigint("created_at_ms", { mode: "number" }).notNull(),
    /** Set when a request first ran under it (the header was pinned anew then). */
    installedAtMs: bigint("installed_at_ms", { mode: "number" }),
    /** The pin the installation wrote. */
    headerRecordId: bigint("header_record_id", { mode: "number" }),
  },
  (t) => [index("frontiers_session").on(t.sessionId, t.createdAtMs)],
);

/** Remote namespaces (C14): one per session and target while open; generations come and go under it. */
export const remoteNamespaces = pgTable(
  "remote_namespaces",
  {
    id: text("id").primaryKey(),
    sessionId: text("session_id").notNull(),
    target: text("target").notNull(),
    status: text("status", { enum: ["open", "closed"] }).notNull(),
    openedByExecutionId: text("opened_by_execution_id").notNull(),
    openedAtMs: bigint("opened_at_ms", { mode: "number" }).notNull(),
    /** The execution that closed it (remote.close), or `host` reasons. */
    closedBy: text("closed_by"),
    closedAtMs: bigint("closed_at_ms", { mode: "number" }),
  },
  (t) => [index("remote_namespaces_session").on(t.sessionId, t.target, t.status)],
);

/** One remote worker generation: where it ran, what it cost to start, how it ended. */
export const remoteGenerations = pgTable(
  "remote_generations",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    namespaceId: text("namespace_id").notNull(),
    generation: text("generation").notNull(),
    target: text("target").notNull(),
    remotePid: bigint("remote_pid", { mode: "number" }).notNull(),
    /** The local ssh process the supervisor watches. */
    localPid: bigint("local_pid", { mode: "number" }).notNull(),
    runtimeDigest: text("runtime_digest").notNull(),
    /** Whether the runtime was copied for this generation (cold) or found there (warm). */
    runtimeCopied: boolean("runtime_copied").notNull(),
    python: text("python").notNull(),
    startedAtMs: bigint("started_at_ms", { mode: "number" }).notNull(),
    endedAtMs: bigint("ended_at_ms", { mode: "number" }),
    /** The supervisor's exit reason (`shutdown`, `worker_exited`, `interrupt_escalated`, ...) or `host_restart`. */
    endReason: text("end_reason"),
  },
  (t) => [uniqueIndex("remote_generations_identity").on(t.namespaceId, t.generation)],
);

/** remote.call operations, idempotent by (namespace, operation id); closed with the completion record sent. */
export const remoteOperations = pgTable(
  "remote_operations",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
    namespaceId: text("namespace_id").notNull(),
    generation: text("generation").notNull(),
    operationId: text("operation_id").notNull(),
    operation: text("operation").notNull(),
    code: text("code").notNull(),
    /** The local cell whose request made it. */
    executionId: text("execution_id").notNull(),
    status: text("status", { enum: ["running", "ok", "error", "interrupted", "failed"] }).notNull(),
    completion: json("completion"),
    endedBy: text("ended_by"),
    startedAtMs: bigint("started_at_ms", { mode: "number" }).notNull(),
    endedAtMs: bigint("ended_at_ms", { mode: "number" }),
  },
  (t) => [uniqueIndex("remote_operations_identity").on(t.namespaceId, t.operationId), index("remote_operations_status").on(t.status)],
);

/** Hosts sharing this database (C21): each `serve` registers itself and heartbeats. */
export const hosts = pgTable("hosts", {
  hostId: text("host_id").primaryKey(),
  /** Where other hosts reach it to forward a client's request (null: not reachable). */
  address: text("address"),
  startedAtMs: bigint("started_at_ms", { mode: "number" }).notNull(),
  heartbeatAtMs: bigint("heartbeat_at_ms", { mode: "number" }).notNull(),
});

/**
 * Session leases (C21): the host that may write a session's records, and the epoch those writes
 * are fenced by. `host_id` null: released. The epoch only grows, so an old holder never matches again.
 */
export const leases = pgTable(
  "leases",
  {
    sessionId: text("session_id").primaryKey(),
    hostId: text("host_id"),
    epoch: bigint("epoch", { mode: "number" }).notNull(),
    expiresAtMs: bigint("expires_at_ms", { mode: "number" }).notNull(),
  },
  (t) => [index("leases_host").on(t.hostId), index("leases_expires").on(t.expiresAtMs)],
);

/** PostgreSQL `bytea` as a Node Buffer, SQLite's `blob({ mode: "buffer" })`. */
const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

/**
 * Display blobs (C20), content-addressed: a display's bundle (its JSON, images by reference) and
 * each image's decoded bytes, each stored once by the sha256 of what is stored.
 */
export const blobs = pgTable("blobs", {
  digest: text("digest").primaryKey(),
  mediaType: text("media_type").notNull(),
  bytes: bigint("bytes", { mode: "number" }).notNull(),
  data: bytea("data").notNull(),
  createdAtMs: bigint("created_at_ms", { mode: "number" }).notNull(),
});

/** Behaviour releases by digest (C21): schema-artifacts.ts says what each column holds. */
export const releases = pgTable("releases", {
  digest: text("digest").primaryKey(),
  manifest: json("manifest").notNull(),
  files: json("files").$type<ReleaseFile[]>().notNull(),
  createdAtMs: bigint("created_at_ms", { mode: "number" }).notNull(),
});

/** Managed skills by id, SKILL.md's bytes in blobs (C21): schema-artifacts.ts. */
export const managedSkills = pgTable("managed_skills", {
  id: text("id").primaryKey(),
  digest: text("digest").notNull(),
  updatedAtMs: bigint("updated_at_ms", { mode: "number" }).notNull(),
});
