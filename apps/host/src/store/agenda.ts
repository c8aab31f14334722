import type { HostDb } from "../db/open";
import { candidateView, stagedCandidates } from "./orientation";
import { openWorkItems, workItemView } from "./work-items";

/** What a session still has to settle about its own work and instructions. */
export interface SessionAgenda {
  /** Work items the session originated that are still open, oldest first. */
  work_items: Array<Record<string, unknown> & { work_item_id: string }>;
  /** Candidates staged for its scope (global and its own) and not adopted yet, oldest first. */
  candidates: Array<Record<string, unknown> & { candidate_id: string }>;
}

/**
 * A session's open work items and staged candidates, from the durable rows (deterministic: no
 * clock, no model), for a frontier block (C12) or an operator view.
 */
export function sessionAgenda(db: HostDb, sessionId: string): SessionAgenda {
  return {
    work_items: openWorkItems(db, sessionId).map(workItemView) as SessionAgenda["work_items"],
    candidates: stagedCandidates(db, sessionId).map(candidateView) as SessionAgenda["candidates"],
  };
}
