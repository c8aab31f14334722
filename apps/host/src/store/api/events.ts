import type { EventRow, EventPayload } from "../events";

/** Events records (store/events.ts). */
export interface EventsStore {
  /** Record an input that arrived, with the attention decision it got. */
  recordInput(input: { sessionId: string; source: string; receivedAtMs: number; payload: EventPayload; attention: unknown }): Promise<EventRow>;
  /** Record a message confirmed for the operator lane (the durable half of a confirmed local send). */
  recordOutbound(message: { sessionId: string; text: string; effectId: string; atMs: number }): Promise<EventRow>;
  /** Inputs of a session that nothing has consumed yet, oldest first. */
  pendingInputs(sessionId: string): Promise<EventRow[]>;
  /**
   * Take a session's unconsumed inputs, oldest first, marking them consumed at `atMs` in the same
   * write: two wakes of one session never both get an input (the rows come back as they are now).
   */
  takePendingInputs(sessionId: string, atMs: number): Promise<EventRow[]>;
  /** Mark inputs as taken into account (by a wake or a boundary). */
  markConsumed(sessionId: string, ids: number[], atMs: number): Promise<void>;
  /** One event by id. */
  getEvent(id: number): Promise<EventRow | undefined>;
  /** Record the attention decision an input got (written after the hook answered). */
  setAttention(sessionId: string, id: number, attention: unknown): Promise<void>;
  /** Inputs deferred and not taken into account yet: each still has to wake its session when due (also after a restart). */
  openDeferredInputs(): Promise<EventRow[]>;
  /** Pending inputs that count now: a deferred input is not pending before its seconds pass. */
  duePendingInputs(sessionId: string, nowMs: number): Promise<EventRow[]>;
}
