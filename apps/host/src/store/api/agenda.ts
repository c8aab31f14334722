import type { SessionAgenda } from "../agenda";

/** Agenda records (store/agenda.ts). */
export interface AgendaStore {
  /**
   * A session's open work items and staged candidates, from the durable rows (deterministic: no
   * clock, no model), for a frontier block (C12) or an operator view.
   */
  sessionAgenda(sessionId: string): Promise<SessionAgenda>;
}
