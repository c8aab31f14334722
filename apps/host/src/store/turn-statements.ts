import type Database from "better-sqlite3";

// The statements a model step runs, prepared once per connection: building them through drizzle
// on every step cost more than the rest of the step together (as for executions).
const prepared = new WeakMap<Database.Database, TurnStatements>();

/** The named statements of a model step. */
export type TurnStatements = Record<StatementName, Database.Statement>;

type StatementName =
  | "appendTranscript" | "newInputs" | "consume" | "newRevisions" | "latestPin" | "latestPinId" | "pendingFrontier" | "installedFrontier"
  | "openWait" | "lastReplyRows" | "reply" | "executionStatus" | "startRequest" | "finishRequest" | "adoptionMark";

function prepare(sqlite: Database.Database): TurnStatements {
  return {
    appendTranscript: sqlite.prepare(
      "INSERT INTO transcript_records (session_id, kind, ref, request_id, call_id, detail, at_ms) VALUES (@sessionId, @kind, @ref, @requestId, @callId, @detail, @atMs) RETURNING seq",
    ),
    newInputs: sqlite.prepare("SELECT id, attention, consumed_at_ms FROM events WHERE session_id = ? AND direction = 'in' AND id > ? ORDER BY id"),
    consume: sqlite.prepare("UPDATE events SET consumed_at_ms = ? WHERE id = ? AND consumed_at_ms IS NULL"),
    newRevisions: sqlite.prepare("SELECT id FROM header_records WHERE session_id = ? AND id > ? AND type = 'header_revision' ORDER BY id"),
    latestPin: sqlite.prepare("SELECT id, record FROM header_records WHERE session_id = ? AND type = 'header_pin' ORDER BY id DESC LIMIT 1"),
    latestPinId: sqlite.prepare("SELECT id FROM header_records WHERE session_id = ? AND type = 'header_pin' ORDER BY id DESC LIMIT 1"),
    pendingFrontier: sqlite.prepare("SELECT * FROM frontiers WHERE session_id = ? AND installed_at_ms IS NULL ORDER BY created_at_ms DESC, id DESC LIMIT 1"),
    installedFrontier: sqlite.prepare(
      "SELECT * FROM frontiers WHERE session_id = ? AND installed_at_ms IS NOT NULL AND header_record_id IS NOT NULL ORDER BY installed_at_ms DESC, created_at_ms DESC LIMIT 1",
    ),
    openWait: sqlite.prepare("SELECT id FROM waits WHERE session_id = ? AND state = 'waiting' LIMIT 1"),
    lastReplyRows: sqlite.prepare(
      "SELECT * FROM transcript_records WHERE session_id = ? AND seq >= (SELECT max(seq) FROM transcript_records WHERE session_id = ? AND kind = 'reply') ORDER BY seq",
    ),
    reply: sqlite.prepare("SELECT reply FROM model_requests WHERE id = ?"),
    executionStatus: sqlite.prepare("SELECT status FROM executions WHERE id = ?"),
    startRequest: sqlite.prepare(
      `INSERT INTO model_requests (id, session_id, turn_id, route, api, model, profile, header_record_id, frontier_id, through_seq, body_digest, body_bytes, shared_prefix_bytes, status, retries, started_at_ms)
       VALUES (@id, @sessionId, @turnId, @route, @api, @model, @profile, @headerRecordId, @frontierId, @throughSeq, @bodyDigest, @bodyBytes, @sharedPrefixBytes, 'running', 0, @startedAtMs)`,
    ),
    adoptionMark: sqlite.prepare("SELECT coalesce(max(id), 0) AS mark FROM orientation_adoptions"),
    finishRequest: sqlite.prepare("UPDATE model_requests SET status = 'ok', reply = @reply, response_model = @responseModel, usage = @usage, retries = @retries, ended_at_ms = @endedAtMs WHERE id = @id"),
  };
}

/** The prepared statements of a model step on this connection. */
export function turnStatements(sqlite: Database.Database): TurnStatements {
  let s = prepared.get(sqlite);
  if (!s) prepared.set(sqlite, (s = prepare(sqlite)));
  return s;
}

/** A frontier row as the drizzle schema names its fields. */
export interface FrontierFields {
  id: string;
  sessionId: string;
  coversThrough: number;
  block: string;
  reason: "selected" | "budget";
  executionId: string | null;
  createdAtMs: number;
  installedAtMs: number | null;
  headerRecordId: number | null;
}

/** A frontier row as raw SQL returns it (snake_case), in the store's shape; both dialects read it so. */
export function frontierFields(r: Record<string, unknown> | undefined): FrontierFields | undefined {
  if (!r) return undefined;
  return {
    id: r.id as string,
    sessionId: r.session_id as string,
    coversThrough: r.covers_through as number,
    block: r.block as string,
    reason: r.reason as FrontierFields["reason"],
    executionId: (r.execution_id as string | null) ?? null,
    createdAtMs: r.created_at_ms as number,
    installedAtMs: (r.installed_at_ms as number | null) ?? null,
    headerRecordId: (r.header_record_id as number | null) ?? null,
  };
}

/** The session's newest pin: id and text. */
export function pinOf(sqlite: Database.Database, sessionId: string): { id: number; text: string } | undefined {
  const row = turnStatements(sqlite).latestPin.get(sessionId) as { id: number; record: string } | undefined;
  return row ? { id: row.id, text: (JSON.parse(row.record) as { text: string }).text } : undefined;
}

/** The id of the session's newest pin, without reading its record (a step needs the text only when the pin changed). */
export function pinIdOf(sqlite: Database.Database, sessionId: string): number | undefined {
  return (turnStatements(sqlite).latestPinId.get(sessionId) as { id: number } | undefined)?.id;
}

/** The newest frontier not installed yet. */
export function pendingFrontierOf(sqlite: Database.Database, sessionId: string): FrontierFields | undefined {
  return frontierFields(turnStatements(sqlite).pendingFrontier.get(sessionId) as Record<string, unknown> | undefined);
}

/** The frontier the session's requests run under now. */
export function installedFrontierOf(sqlite: Database.Database, sessionId: string): FrontierFields | undefined {
  return frontierFields(turnStatements(sqlite).installedFrontier.get(sessionId) as Record<string, unknown> | undefined);
}
