import type { Recovery } from "../recovery";

/** What a start does about a host that did not stop cleanly. */
export interface RecoveryStore {
  /**
   * One transaction: executions left running closed as interrupted (`host_restart`), due waits
   * woken, unanswered host requests closed, older open waits superseded, draining peers stopped,
   * remote generations ended, and one `host.recovered` incident when any of it happened.
   */
  recoverAfterCrash(nowMs: number): Promise<Recovery>;
}
