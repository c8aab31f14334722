import type { CellResult, ResultDisplay, TranscriptRecord } from "@klbr/driver";
import type { HeaderRevision } from "@klbr/header";
import type { InputPayload } from "@klbr/transcript";
import type { TranscriptStore } from "../api/transcript";
import type { DisplayRef } from "../displays";
import { NAMESPACE_LOST_REASONS, type ReadOptions } from "../transcript";
import type { PgContext, Q } from "./context";

// The same statements as store/transcript.ts. PostgreSQL hands `json` columns back parsed and
// int8 as numbers (pg-open.ts), so nothing here parses JSON text.
type Row = Record<string, unknown>;

/** Append one transcript record on `q`; its seq. */
export async function appendOn(c: PgContext, q: Q, row: Parameters<TranscriptStore["appendTranscript"]>[0]): Promise<number> {
  const detail = row.detail === undefined || row.detail === null ? null : JSON.stringify(row.detail);
  const [r] = await c.rows<{ seq: number }>(
    q,
    "INSERT INTO transcript_records (session_id, kind, ref, request_id, call_id, detail, at_ms) VALUES ($1, $2, $3, $4, $5, $6::json, $7) RETURNING seq",
    [row.sessionId, row.kind, row.ref, row.requestId ?? null, row.callId ?? null, detail, row.atMs],
  );
  return r!.seq;
}

/** The highest numeric ref of a kind in a session's transcript, on `q`. */
export async function maxRefOn(c: PgContext, q: Q, sessionId: string, kind: "input" | "observation"): Promise<number> {
  // Only input and observation refs are read here, and those are always integers (event and header record ids).
  const [r] = await c.rows<{ ref: number | null }>(q, "SELECT max(ref::bigint) AS ref FROM transcript_records WHERE session_id = $1 AND kind = $2", [sessionId, kind]);
  return r?.ref ?? 0;
}

/** TranscriptStore over PostgreSQL. */
export function pgTranscript(c: PgContext): TranscriptStore {
  const one = async <R>(q: Q, text: string, values: unknown[]) => (await c.rows<R>(q, text, values))[0];
  const rowsOf = (q: Q, sessionId: string, after: number, through = Number.MAX_SAFE_INTEGER) => c.rows<Row>(q, "SELECT * FROM transcript_records WHERE session_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq", [sessionId, after, through]);

  const namespaceLost = async (q: Q, sessionId: string, seq: number, executionId: string): Promise<string | null> => {
    const own = await one<{ session_id: string; generation: string }>(q, "SELECT session_id, generation FROM executions WHERE id = $1", [executionId]);
    const before = await one<{ generation: string }>(q, "SELECT e.generation FROM transcript_records t JOIN executions e ON e.id = t.ref WHERE t.session_id = $1 AND t.kind = 'cell' AND t.seq < $2 ORDER BY t.seq DESC LIMIT 1", [sessionId, seq]);
    if (!own || !before || before.generation === own.generation) return null;
    const reset = await one<{ reason: string }>(q, "SELECT reason FROM kernel_resets WHERE session_id = $1 AND generation = $2 ORDER BY id DESC LIMIT 1", [own.session_id, own.generation]);
    return reset && NAMESPACE_LOST_REASONS.has(reset.reason) ? reset.reason : null;
  };

  const resultDisplays = async (q: Q, raw: unknown, images: boolean): Promise<ResultDisplay[]> => {
    const refs = Array.isArray(raw) ? (raw as DisplayRef[]) : [];
    const out: ResultDisplay[] = [];
    for (const d of refs) {
      const list = [];
      for (const i of d.images) {
        const image = { mime: i.mime, digest: i.digest, width: i.width, height: i.height, bytes: i.bytes };
        const row = images ? await one<{ data: Buffer }>(q, "SELECT data FROM blobs WHERE digest = $1", [i.digest]) : undefined;
        list.push(row ? { ...image, base64: row.data.toString("base64") } : image);
      }
      out.push({ text: d.text, images: list, ...(d.omitted !== undefined ? { omitted: d.omitted } : {}) });
    }
    return out;
  };

  const cellResult = async (q: Q, executionId: string, opts: ReadOptions = {}): Promise<CellResult | null> => {
    const r = await one<Row>(q, "SELECT id, status, output, truncated_bytes, error, ended_by, started_at_ms, ended_at_ms, displays, displays_dropped FROM executions WHERE id = $1", [executionId]);
    if (!r || r.status === "running") return null;
    const displays = await resultDisplays(q, r.displays, opts.images === true);
    const dropped = (r.displays_dropped as number | null) ?? 0;
    return {
      execution_id: r.id as string,
      status: r.status as CellResult["status"],
      output: (r.output as CellResult["output"] | null) ?? [],
      truncated_bytes: (r.truncated_bytes as number | null) ?? 0,
      error: (r.error as string | null) ?? null,
      ended_by: (r.ended_by as string | null) ?? null,
      started_at_ms: r.started_at_ms as number,
      ended_at_ms: (r.ended_at_ms as number | null) ?? null,
      ...(displays.length > 0 ? { displays } : {}),
      ...(dropped > 0 ? { displays_dropped: dropped } : {}),
    };
  };

  const loadTranscript = async (q: Q, sessionId: string, after: number, through?: number, opts: ReadOptions = {}): Promise<TranscriptRecord[]> => {
    const out: TranscriptRecord[] = [];
    for (const row of await rowsOf(q, sessionId, after, through)) {
      const seq = row.seq as number;
      const ref = row.ref as string;
      switch (row.kind) {
        case "input": {
          const e = (await one<{ source: string; received_at_ms: number; payload: InputPayload }>(q, "SELECT source, received_at_ms, payload FROM events WHERE id = $1", [Number(ref)]))!;
          out.push({ seq, kind: "input", event: { source: e.source, received_at_ms: e.received_at_ms, payload: e.payload } });
          break;
        }
        case "reply": {
          const r = (await one<{ reply: unknown }>(q, "SELECT reply FROM model_requests WHERE id = $1", [ref]))!;
          out.push({ seq, kind: "reply", request_id: ref, reply: r.reply as never });
          break;
        }
        case "cell": {
          const result = await cellResult(q, ref, opts);
          if (!result) return out;
          const lost = await namespaceLost(q, sessionId, seq, ref);
          if (lost !== null) result.namespace_lost = lost;
          out.push({ seq, kind: "cell", request_id: row.request_id as string, call_id: (row.call_id as string | null) ?? null, result });
          break;
        }
        case "refusal": {
          const detail = row.detail as { reason: string };
          out.push({ seq, kind: "refusal", request_id: row.request_id as string, call_id: (row.call_id as string | null) ?? null, reason: detail.reason, at_ms: row.at_ms as number });
          break;
        }
        case "observation": {
          const h = (await one<{ record: HeaderRevision }>(q, "SELECT record FROM header_records WHERE id = $1", [Number(ref)]))!;
          out.push({ seq, kind: "observation", revision: h.record });
          break;
        }
        case "turn_end": {
          const detail = row.detail as { reason: string };
          out.push({ seq, kind: "turn_end", reason: detail.reason, at_ms: row.at_ms as number });
          break;
        }
      }
    }
    return out;
  };

  return {
    appendTranscript: (row) => c.write(row.sessionId, (tx) => appendOn(c, tx, row)),
    namespaceLost: (sessionId, seq, executionId) => c.read((db) => namespaceLost(db, sessionId, seq, executionId)),
    lastSeq: (sessionId) => c.read(async (db) => (await one<{ seq: number | null }>(db, "SELECT max(seq) AS seq FROM transcript_records WHERE session_id = $1", [sessionId]))?.seq ?? 0),
    maxRef: (sessionId, kind) => c.read((db) => maxRefOn(c, db, sessionId, kind)),
    // Raw rows as SQLite returns them: its json columns are text there, so they are text here too.
    transcriptRows: (sessionId, after, through) =>
      c.read(async (db) => (await rowsOf(db, sessionId, after, through)).map((r) => ({ ...r, detail: r.detail === null || r.detail === undefined ? null : JSON.stringify(r.detail) }))),
    cellResult: (executionId, opts) => c.read((db) => cellResult(db, executionId, opts)),
    loadTranscript: (sessionId, after, through, opts) => c.read((db) => loadTranscript(db, sessionId, after, through, opts)),
    cellRecordSeq: (sessionId, executionId) => c.read(async (db) => (await one<{ seq: number }>(db, "SELECT seq FROM transcript_records WHERE session_id = $1 AND kind = 'cell' AND ref = $2", [sessionId, executionId]))?.seq),
    seqBefore: (sessionId, seq) => c.read(async (db) => (await one<{ seq: number | null }>(db, "SELECT max(seq) AS seq FROM transcript_records WHERE session_id = $1 AND seq < $2", [sessionId, seq]))?.seq ?? 0),
    sessionsToResume: () =>
      c.read(async (db) =>
        (await c.rows<{ session_id: string }>(db, "SELECT DISTINCT session_id FROM transcript_records UNION SELECT DISTINCT session_id FROM events WHERE direction = 'in' AND consumed_at_ms IS NULL")).map((r) => r.session_id),
      ),
    lastCellThrough: (sessionId, seq) => c.read(async (db) => (await one<{ ref: string }>(db, "SELECT ref FROM transcript_records WHERE session_id = $1 AND kind = 'cell' AND seq <= $2 ORDER BY seq DESC LIMIT 1", [sessionId, seq]))?.ref),
    executionCode: (executionId) => c.read(async (db) => (await one<{ code: string }>(db, "SELECT code FROM executions WHERE id = $1", [executionId]))?.code ?? ""),
  };
}
