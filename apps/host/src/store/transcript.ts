import type { CellResult, ResultDisplay, TranscriptRecord } from "@klbr/driver";
import type { HeaderRevision } from "@klbr/header";
import type { InputPayload } from "@klbr/transcript";
import type Database from "better-sqlite3";
import type { HostDb } from "../db/open";
import { transcriptRecords } from "../db/schema";
import type { DisplayRef } from "./displays";

/** One transcript row as stored. */
export type TranscriptRow = typeof transcriptRecords.$inferSelect;

/** Append one record to a session's transcript; returns its sequence number. */
export function appendTranscript(
  db: HostDb,
  row: { sessionId: string; kind: TranscriptRow["kind"]; ref: string; requestId?: string | null; callId?: string | null; detail?: unknown; atMs: number },
): number {
  return db
    .insert(transcriptRecords)
    .values({ sessionId: row.sessionId, kind: row.kind, ref: row.ref, requestId: row.requestId ?? null, callId: row.callId ?? null, detail: row.detail ?? null, atMs: row.atMs })
    .returning({ seq: transcriptRecords.seq })
    .get().seq;
}

const statements = new WeakMap<Database.Database, ReturnType<typeof prepare>>();

function prepare(sqlite: Database.Database) {
  return {
    rows: sqlite.prepare("SELECT * FROM transcript_records WHERE session_id = ? AND seq > ? AND seq <= ? ORDER BY seq"),
    last: sqlite.prepare("SELECT max(seq) AS seq FROM transcript_records WHERE session_id = ?"),
    maxRef: sqlite.prepare("SELECT max(CAST(ref AS INTEGER)) AS ref FROM transcript_records WHERE session_id = ? AND kind = ?"),
    event: sqlite.prepare("SELECT source, received_at_ms, payload FROM events WHERE id = ?"),
    reply: sqlite.prepare("SELECT reply FROM model_requests WHERE id = ?"),
    execution: sqlite.prepare("SELECT id, status, output, truncated_bytes, error, ended_by, started_at_ms, ended_at_ms, displays, displays_dropped FROM executions WHERE id = ?"),
    blob: sqlite.prepare("SELECT data FROM blobs WHERE digest = ?"),
    header: sqlite.prepare("SELECT record FROM header_records WHERE id = ?"),
    previousCellGeneration: sqlite.prepare(
      "SELECT e.generation FROM transcript_records t JOIN executions e ON e.id = t.ref WHERE t.session_id = ? AND t.kind = 'cell' AND t.seq < ? ORDER BY t.seq DESC LIMIT 1",
    ),
    resetReason: sqlite.prepare("SELECT reason FROM kernel_resets WHERE session_id = ? AND generation = ? ORDER BY id DESC LIMIT 1"),
    executionGeneration: sqlite.prepare("SELECT session_id, generation FROM executions WHERE id = ?"),
  };
}

/**
 * kernel.reset reasons that end a namespace the session still had (C17, C19): the model's first
 * cell in the generation after one is told its names are gone.
 */
export const NAMESPACE_LOST_REASONS: ReadonlySet<string> = new Set(["idle_culled", "memory_limit", "cpu_limit", "procs_limit", "host_failover"]);

/**
 * Why the namespace the model last ran a cell in is gone, when the cell at `seq` runs in a later
 * generation started for one of {@link NAMESPACE_LOST_REASONS}; null otherwise (the same
 * generation, the session's first cell, or a restart the model already read as its cell's failure).
 */
export function namespaceLost(sqlite: Database.Database, sessionId: string, seq: number, executionId: string): string | null {
  const s = stmts(sqlite);
  const own = s.executionGeneration.get(executionId) as { session_id: string; generation: string } | undefined;
  const before = s.previousCellGeneration.get(sessionId, seq) as { generation: string } | undefined;
  if (!own || !before || before.generation === own.generation) return null;
  const reset = s.resetReason.get(own.session_id, own.generation) as { reason: string } | undefined;
  return reset && NAMESPACE_LOST_REASONS.has(reset.reason) ? reset.reason : null;
}

function stmts(sqlite: Database.Database) {
  let s = statements.get(sqlite);
  if (!s) statements.set(sqlite, (s = prepare(sqlite)));
  return s;
}

/** The session's last sequence number (0 when its transcript is empty). */
export function lastSeq(sqlite: Database.Database, sessionId: string): number {
  return (stmts(sqlite).last.get(sessionId) as { seq: number | null }).seq ?? 0;
}

/** The highest numeric ref of a kind in the session's transcript (the last event or header record taken in). */
export function maxRef(sqlite: Database.Database, sessionId: string, kind: "input" | "observation"): number {
  return (stmts(sqlite).maxRef.get(sessionId, kind) as { ref: number | null }).ref ?? 0;
}

/** Raw transcript rows of a session in (after, through]. */
export function transcriptRows(sqlite: Database.Database, sessionId: string, after: number, through = Number.MAX_SAFE_INTEGER): Array<Record<string, unknown>> {
  return stmts(sqlite).rows.all(sessionId, after, through) as Array<Record<string, unknown>>;
}

/** How records are read for a request: with each displayed image's bytes (C20) for a route declared `"images": true` only. */
export interface ReadOptions {
  images?: boolean;
}

/** A cell's displays as the model reads them; each image's stored bytes too when `images`. */
function resultDisplays(sqlite: Database.Database, raw: unknown, images: boolean): ResultDisplay[] {
  const refs = typeof raw === "string" ? (JSON.parse(raw) as DisplayRef[]) : [];
  return refs.map((d) => ({
    text: d.text,
    images: d.images.map((i) => {
      const image = { mime: i.mime, digest: i.digest, width: i.width, height: i.height, bytes: i.bytes };
      if (!images) return image;
      const row = stmts(sqlite).blob.get(i.digest) as { data: Buffer } | undefined;
      return row ? { ...image, base64: row.data.toString("base64") } : image;
    }),
    ...(d.omitted !== undefined ? { omitted: d.omitted } : {}),
  }));
}

/** A cell's result from its execution row, or null while it has none or still runs. */
export function cellResult(sqlite: Database.Database, executionId: string, opts: ReadOptions = {}): CellResult | null {
  const r = stmts(sqlite).execution.get(executionId) as Record<string, unknown> | undefined;
  if (!r || r.status === "running") return null;
  const displays = resultDisplays(sqlite, r.displays, opts.images === true);
  const dropped = (r.displays_dropped as number | null) ?? 0;
  return {
    execution_id: r.id as string,
    status: r.status as CellResult["status"],
    output: r.output ? (JSON.parse(r.output as string) as CellResult["output"]) : [],
    truncated_bytes: (r.truncated_bytes as number | null) ?? 0,
    error: (r.error as string | null) ?? null,
    ended_by: (r.ended_by as string | null) ?? null,
    started_at_ms: r.started_at_ms as number,
    ended_at_ms: (r.ended_at_ms as number | null) ?? null,
    // Only when there are any: a result without displays reads exactly as before C20.
    ...(displays.length > 0 ? { displays } : {}),
    ...(dropped > 0 ? { displays_dropped: dropped } : {}),
  };
}

/**
 * The records of a session in (after, through], resolved from the rows their refs name: what a
 * request is assembled from. A cell whose execution has not closed stops the list there: nothing
 * after an unfinished record can be read yet.
 */
export function loadTranscript(sqlite: Database.Database, sessionId: string, after: number, through = Number.MAX_SAFE_INTEGER, opts: ReadOptions = {}): TranscriptRecord[] {
  const s = stmts(sqlite);
  const out: TranscriptRecord[] = [];
  for (const row of transcriptRows(sqlite, sessionId, after, through)) {
    const seq = row.seq as number;
    const ref = row.ref as string;
    switch (row.kind) {
      case "input": {
        const e = s.event.get(Number(ref)) as { source: string; received_at_ms: number; payload: string };
        out.push({ seq, kind: "input", event: { source: e.source, received_at_ms: e.received_at_ms, payload: JSON.parse(e.payload) as InputPayload } });
        break;
      }
      case "reply": {
        const r = s.reply.get(ref) as { reply: string };
        out.push({ seq, kind: "reply", request_id: ref, reply: JSON.parse(r.reply) });
        break;
      }
      case "cell": {
        const result = cellResult(sqlite, ref, opts);
        if (!result) return out;
        const lost = namespaceLost(sqlite, sessionId, seq, ref);
        if (lost !== null) result.namespace_lost = lost;
        out.push({ seq, kind: "cell", request_id: row.request_id as string, call_id: (row.call_id as string | null) ?? null, result });
        break;
      }
      case "refusal": {
        const detail = JSON.parse(row.detail as string) as { reason: string };
        out.push({ seq, kind: "refusal", request_id: row.request_id as string, call_id: (row.call_id as string | null) ?? null, reason: detail.reason, at_ms: row.at_ms as number });
        break;
      }
      case "observation": {
        const h = s.header.get(Number(ref)) as { record: string };
        out.push({ seq, kind: "observation", revision: JSON.parse(h.record) as HeaderRevision });
        break;
      }
      case "turn_end": {
        const detail = JSON.parse(row.detail as string) as { reason: string };
        out.push({ seq, kind: "turn_end", reason: detail.reason, at_ms: row.at_ms as number });
        break;
      }
    }
  }
  return out;
}

/** The sequence number of the transcript's record of a cell (by its execution id), if it has one. */
export function cellRecordSeq(sqlite: Database.Database, sessionId: string, executionId: string): number | undefined {
  return (sqlite.prepare("SELECT seq FROM transcript_records WHERE session_id = ? AND kind = 'cell' AND ref = ?").get(sessionId, executionId) as { seq: number } | undefined)?.seq;
}

/** The session's last sequence number before `seq` (0 when none). */
export function seqBefore(sqlite: Database.Database, sessionId: string, seq: number): number {
  return (sqlite.prepare("SELECT max(seq) AS seq FROM transcript_records WHERE session_id = ? AND seq < ?").get(sessionId, seq) as { seq: number | null }).seq ?? 0;
}

/** Sessions a restarted host looks at again: those with a transcript, and those with unconsumed input. */
export function sessionsToResume(sqlite: Database.Database): string[] {
  const rows = sqlite
    .prepare("SELECT DISTINCT session_id FROM transcript_records UNION SELECT DISTINCT session_id FROM events WHERE direction = 'in' AND consumed_at_ms IS NULL")
    .all() as Array<{ session_id: string }>;
  return rows.map((r) => r.session_id);
}

/** The execution id of the session's last cell record at or before `seq`, if any. */
export function lastCellThrough(sqlite: Database.Database, sessionId: string, seq: number): string | undefined {
  return (sqlite.prepare("SELECT ref FROM transcript_records WHERE session_id = ? AND kind = 'cell' AND seq <= ? ORDER BY seq DESC LIMIT 1").get(sessionId, seq) as { ref: string } | undefined)?.ref;
}

/** An execution's source ("" when there is no such execution). */
export function executionCode(sqlite: Database.Database, executionId: string): string {
  return (sqlite.prepare("SELECT code FROM executions WHERE id = ?").get(executionId) as { code: string } | undefined)?.code ?? "";
}
