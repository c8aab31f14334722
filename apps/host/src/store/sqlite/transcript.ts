import type Database from "better-sqlite3";
import { namespaceLost, lastSeq, maxRef, transcriptRows, cellResult, loadTranscript, cellRecordSeq, seqBefore, sessionsToResume, lastCellThrough, executionCode } from "../transcript";
import type { TranscriptStore } from "../api/transcript";
import { turnStatements } from "../turn-statements";
import type { SqliteContext } from "./context";

/** The prepared transcript append (a model step appends several records; drizzle's builder would cost more than the insert). */
export function appendStatement(sqlite: Database.Database): (row: Parameters<TranscriptStore["appendTranscript"]>[0]) => number {
  // Looked up per call (a WeakMap hit): a store over an old read-only log must not prepare at construction.
  return (row) => {
    const insert = turnStatements(sqlite).appendTranscript;
    const detail = row.detail === undefined || row.detail === null ? null : JSON.stringify(row.detail);
    return (insert.get({ sessionId: row.sessionId, kind: row.kind, ref: row.ref, requestId: row.requestId ?? null, callId: row.callId ?? null, detail, atMs: row.atMs }) as { seq: number }).seq;
  };
}

/** TranscriptStore over the synchronous SQLite functions. */
export function sqliteTranscript(c: SqliteContext): TranscriptStore {
  const append = appendStatement(c.sqlite);
  return {
    appendTranscript: (row) => c.write(row.sessionId, () => append(row)),
    namespaceLost: async (sessionId, seq, executionId) => namespaceLost(c.sqlite, sessionId, seq, executionId),
    lastSeq: async (sessionId) => lastSeq(c.sqlite, sessionId),
    maxRef: async (sessionId, kind) => maxRef(c.sqlite, sessionId, kind),
    transcriptRows: async (sessionId, after, through) => transcriptRows(c.sqlite, sessionId, after, through),
    cellResult: async (executionId, opts) => cellResult(c.sqlite, executionId, opts),
    loadTranscript: async (sessionId, after, through, opts) => loadTranscript(c.sqlite, sessionId, after, through, opts),
    cellRecordSeq: async (sessionId, executionId) => cellRecordSeq(c.sqlite, sessionId, executionId),
    seqBefore: async (sessionId, seq) => seqBefore(c.sqlite, sessionId, seq),
    sessionsToResume: async () => sessionsToResume(c.sqlite),
    lastCellThrough: async (sessionId, seq) => lastCellThrough(c.sqlite, sessionId, seq),
    executionCode: async (executionId) => executionCode(c.sqlite, executionId),
  };
}
