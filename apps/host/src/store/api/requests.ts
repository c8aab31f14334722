/** Requests records (store/requests.ts). */
export interface RequestsStore {
  /** Record a host request as it arrives. */
  recordRequest(sessionId: string, row: { executionId: string; requestId: string; method: string; request: unknown; requestedAtMs: number }): Promise<number>;
  /** Record the reply a request got. */
  recordReply(sessionId: string, id: number, reply: unknown, repliedAtMs: number): Promise<void>;
  /** A request's 1-based index among the requests its execution made (its row and those before it). */
  requestStep(executionId: string, rowId: number): Promise<number>;
  /**
   * After a crash: every request still without a reply was cut short with its host, so none of them
   * was answered; each gets the `host_restart` reply (C8). Returns the row ids closed.
   */
  closeUnansweredRequests(nowMs: number): Promise<number[]>;
}
