import { adoptCandidate, stageCandidate } from "../adoption";
import { getCandidate, insertCandidate, markAdopted, findAdoption, insertAdoption, setAdoptionReply, currentSources, stagedCandidates, adoptedScopes } from "../orientation";
import type { OrientationStore } from "../api/orientation";
import type { SqliteContext } from "./context";

/** OrientationStore over the synchronous SQLite functions. */
export function sqliteOrientation(c: SqliteContext): OrientationStore {
  return {
    stageCandidate: async (row, repeat) => stageCandidate(c.db, row, repeat),
    // The adopting session's header revision is one of its records: fenced by its lease.
    adoptCandidate: (adoption, rules, headerAtMs) => c.write(adoption.sessionId, () => adoptCandidate(c.db, adoption, rules, headerAtMs)),
    getCandidate: async (id) => getCandidate(c.db, id),
    insertCandidate: async (row) => insertCandidate(c.db, row),
    markAdopted: async (id) => markAdopted(c.db, id),
    findAdoption: async (operationId) => findAdoption(c.db, operationId),
    insertAdoption: async (row) => insertAdoption(c.db, row),
    setAdoptionReply: async (id, reply) => setAdoptionReply(c.db, id, reply),
    currentSources: async (scope) => currentSources(c.db, scope),
    stagedCandidates: async (sessionId) => stagedCandidates(c.db, sessionId),
    adoptedScopes: async () => adoptedScopes(c.db),
  };
}
