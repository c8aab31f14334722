import { incidents } from "../../db/pg-schema";
import type { IncidentsStore } from "../api/incidents";
import type { PgContext } from "./context";

/** IncidentsStore over PostgreSQL: a host's own observations, written under no session's lease. */
export function pgIncidents(c: PgContext): IncidentsStore {
  return {
    recordIncident: (kind, detail, atMs) => c.writeHost(async (tx) => void (await tx.insert(incidents).values({ kind, detail, atMs }))),
  };
}
