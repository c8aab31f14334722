import type { DisplayRef, PreparedDisplay } from "../displays";

/** Displays records (store/displays.ts). */
export interface DisplaysStore {
  /**
   * Store one display of a running execution: its blobs (those already stored are not written
   * again) and the execution's list with it appended (`listed`, already including it), in one
   * transaction, so a display is never half there.
   */
  storeDisplay(sessionId: string, executionId: string, display: PreparedDisplay, listed: DisplayRef[], atMs: number): Promise<void>;
}
