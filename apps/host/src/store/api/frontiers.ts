import type { frontiers } from "../../db/schema";
import type { FrontierRow } from "../frontiers";

/** Frontiers records (store/frontiers.ts). */
export interface FrontiersStore {
  /** Record a frontier (selected by a cell, or a budget fold by the driver). */
  recordFrontier(row: Omit<typeof frontiers.$inferInsert, "installedAtMs" | "headerRecordId">): Promise<FrontierRow>;
  /** The newest frontier a session selected that no request has run under yet. */
  pendingFrontier(sessionId: string): Promise<FrontierRow | undefined>;
  /** Mark a frontier installed under the pin its installation wrote; older uninstalled ones of the session are superseded with it. */
  markInstalled(sessionId: string, id: string, headerRecordId: number, atMs: number): Promise<void>;
  /** The frontier a session's requests run under now: the newest installed one. */
  installedFrontier(sessionId: string): Promise<FrontierRow | undefined>;
  /** One frontier by id. */
  getFrontier(id: string): Promise<FrontierRow | undefined>;
}
