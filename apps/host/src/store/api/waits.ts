import type { WaitRow, WaitReply } from "../waits";

/** Waits records (store/waits.ts). */
export interface WaitsStore {
  /** Close every open wait of a session except `keep` as superseded by it; returns the rows closed. */
  supersedeWaits(sessionId: string, keep: string, nowMs: number): Promise<WaitRow[]>;
  /**
   * Record a durable wait. The deadline and the check for already-pending input happen in one
   * immediate transaction, so an input that lands between "check" and "record" cannot be missed:
   * either it is seen as pending here, or it arrives after the wait exists and wakes it. A session
   * has at most one open wait (C8): the same transaction closes its older open waits as superseded,
   * so one input later wakes one wait, not a pile of them.
   */
  createWait(wait: { id: string; sessionId: string; executionId: string; reason: string; seconds: number | null; nowMs: number }): Promise<{ row: WaitRow; reply: WaitReply; superseded: WaitRow[] }>;
  /** Wake a session's open waits (an input arrived, or a deadline passed); returns the rows woken. */
  wakeWaits(sessionId: string, wokenBy: string, nowMs: number): Promise<WaitRow[]>;
  /**
   * A deferred input is due: wake the session's open waits for it, unless the input was taken into
   * account meanwhile (or is gone): then null and nothing woken. The check and the wake are one write.
   */
  wakeForInput(sessionId: string, eventId: number, wokenBy: string, nowMs: number): Promise<WaitRow[] | null>;
  /** Wake one wait if it is still open (its own deadline passed); returns the row if it was woken now. */
  wakeWait(sessionId: string, id: string, wokenBy: string, nowMs: number): Promise<WaitRow | undefined>;
  /** Wake every open wait whose deadline has passed; returns the rows woken. */
  wakeDueWaits(nowMs: number): Promise<WaitRow[]>;
  /**
   * A log written before waits were superseded may hold several open waits per session: keep the
   * newest of each session open and close the rest as superseded by it (run at recovery).
   */
  supersedeOlderOpenWaits(nowMs: number): Promise<WaitRow[]>;
  /** Waits still open, for timers after a restart. */
  openWaits(): Promise<WaitRow[]>;
  /** One wait by id. */
  getWait(id: string): Promise<WaitRow | undefined>;
  /** The session's open waits, oldest first (raw columns, for the frontier block). */
  sessionOpenWaits(sessionId: string): Promise<Array<{ id: string; reason: string; deadline_ms: number | null }>>;
}
