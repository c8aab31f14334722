import { recordIncident } from "../incidents";
import type { IncidentsStore } from "../api/incidents";
import type { SqliteContext } from "./context";

/** IncidentsStore over the synchronous SQLite functions. */
export function sqliteIncidents(c: SqliteContext): IncidentsStore {
  return {
    recordIncident: async (kind, detail, atMs) => recordIncident(c.db, kind, detail, atMs),
  };
}
