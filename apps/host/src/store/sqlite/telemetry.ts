import { modelRequestById, callIdOfCell, hostRequestsOf, peerCausesOf } from "../telemetry";
import type { TelemetryStore } from "../api/telemetry";
import type { SqliteContext } from "./context";

/** TelemetryStore over the synchronous SQLite functions. */
export function sqliteTelemetry(c: SqliteContext): TelemetryStore {
  return {
    modelRequestById: async (id) => modelRequestById(c.db, id),
    callIdOfCell: async (executionId) => callIdOfCell(c.db, executionId),
    hostRequestsOf: async (executionId) => hostRequestsOf(c.db, executionId),
    peerCausesOf: async (sessionId, sinceMs, untilMs) => peerCausesOf(c.db, sessionId, sinceMs, untilMs),
  };
}
