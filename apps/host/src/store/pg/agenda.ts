import type { AgendaStore } from "../api/agenda";
import type { SessionAgenda } from "../agenda";
import { candidateView } from "../orientation";
import { workItemView } from "../work-items";
import type { PgContext } from "./context";
import { stagedOn } from "./orientation";
import { openWorkItemsOn } from "./work-items";

/** AgendaStore over PostgreSQL. */
export function pgAgenda(c: PgContext): AgendaStore {
  return {
    sessionAgenda: (sessionId) =>
      c.read(async (db) => ({
        work_items: (await openWorkItemsOn(db, sessionId)).map(workItemView) as SessionAgenda["work_items"],
        candidates: (await stagedOn(db, sessionId)).map(candidateView) as SessionAgenda["candidates"],
      })),
  };
}
