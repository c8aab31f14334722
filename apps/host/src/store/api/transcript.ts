import type { CellResult, TranscriptRecord } from "@klbr/driver";
import type { TranscriptRow, ReadOptions } from "../transcript";

/** Transcript records (store/transcript.ts). */
export interface TranscriptStore {
  /** Append one record to a session's transcript; returns its sequence number. */
  appendTranscript(row: { sessionId: string; kind: TranscriptRow["kind"]; ref: string; requestId?: string | null; callId?: string | null; detail?: unknown; atMs: number }): Promise<number>;
  /**
   * Why the namespace the model last ran a cell in is gone, when the cell at `seq` runs in a later
   * generation started for one of {@link NAMESPACE_LOST_REASONS}; null otherwise (the same
   * generation, the session's first cell, or a restart the model already read as its cell's failure).
   */
  namespaceLost(sessionId: string, seq: number, executionId: string): Promise<string | null>;
  /** The session's last sequence number (0 when its transcript is empty). */
  lastSeq(sessionId: string): Promise<number>;
  /** The highest numeric ref of a kind in the session's transcript (the last event or header record taken in). */
  maxRef(sessionId: string, kind: "input" | "observation"): Promise<number>;
  /** Raw transcript rows of a session in (after, through]. */
  transcriptRows(sessionId: string, after: number, through?: number): Promise<Array<Record<string, unknown>>>;
  /** A cell's result from its execution row, or null while it has none or still runs. */
  cellResult(executionId: string, opts?: ReadOptions): Promise<CellResult | null>;
  /**
   * The records of a session in (after, through], resolved from the rows their refs name: what a
   * request is assembled from. A cell whose execution has not closed stops the list there: nothing
   * after an unfinished record can be read yet.
   */
  loadTranscript(sessionId: string, after: number, through?: number, opts?: ReadOptions): Promise<TranscriptRecord[]>;
  /** The sequence number of the transcript's record of a cell (by its execution id), if it has one. */
  cellRecordSeq(sessionId: string, executionId: string): Promise<number | undefined>;
  /** The session's last sequence number before `seq` (0 when none). */
  seqBefore(sessionId: string, seq: number): Promise<number>;
  /** Sessions a restarted host looks at again: those with a transcript, and those with unconsumed input. */
  sessionsToResume(): Promise<string[]>;
  /** The execution id of the session's last cell record at or before `seq`, if any. */
  lastCellThrough(sessionId: string, seq: number): Promise<string | undefined>;
  /** An execution's source ("" when there is no such execution). */
  executionCode(executionId: string): Promise<string>;
}
