import type { SessionRecovery } from "../failover";
import type { Recovery } from "../recovery";

/** What a start does about a host that did not stop cleanly. */
export interface RecoveryStore {
  /**
   * One transaction: executions left running closed as interrupted (`host_restart`), due waits
   * woken, unanswered host requests closed, older open waits superseded, draining peers stopped,
   * remote generations ended, and one `host.recovered` incident when any of it happened.
   */
  recoverAfterCrash(nowMs: number): Promise<Recovery>;
  /**
   * One session's takeover (C21), one transaction: its running cells failed `host_lost`, their
   * unanswered host requests closed, its running model requests cut (the turn asks again), and the
   * `session.taken_over` incident (store/failover.ts).
   */
  recoverSession(sessionId: string, previous: { hostId: string; epoch: number }, reason: "host_failover" | "host_restart", nowMs: number): Promise<SessionRecovery>;
}
