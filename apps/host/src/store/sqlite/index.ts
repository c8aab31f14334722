import type Database from "better-sqlite3";
import type { HostDb } from "../../db/open";
import { NO_FENCE, type SessionFence, type Store } from "../api";
import { sqliteContext } from "./context";
import { sqliteAgenda } from "./agenda";
import { sqliteBlobs } from "./blobs";
import { sqliteDisplays } from "./displays";
import { sqliteEffects } from "./effects";
import { sqliteEvents } from "./events";
import { sqliteExecutions } from "./executions";
import { sqliteFrontiers } from "./frontiers";
import { sqliteHeaders } from "./headers";
import { sqliteIncidents } from "./incidents";
import { sqliteKernel } from "./kernel";
import { sqliteLogView } from "./log-view";
import { sqliteModelRequests } from "./model-requests";
import { sqliteOrientation } from "./orientation";
import { sqlitePeerExchange } from "./peer-exchange";
import { sqlitePeerRequests } from "./peer-requests";
import { sqlitePeers } from "./peers";
import { sqliteRecovery } from "./recovery";
import { sqliteRemote } from "./remote";
import { sqliteRequests } from "./requests";
import { sqliteSessionViews } from "./session-views";
import { sqliteTelemetry } from "./telemetry";
import { sqliteTranscribe } from "./transcribe";
import { sqliteTranscript } from "./transcript";
import { sqliteTurn } from "./turn";
import { sqliteWaits } from "./waits";
import { sqliteWorkItems } from "./work-items";

/** SqliteStore's own: the connection it was built over (tests and the CLI's read-only open reach it; nothing else should). */
export interface SqliteStore extends Store {
  readonly dialect: "sqlite";
  readonly db: HostDb;
  readonly sqlite: Database.Database;
}

/**
 * The Store over the embedded SQLite log: each method calls the synchronous function of
 * store/*.ts and resolves at once, so a SQLite host keeps its speed (no queue, no extra round
 * trip). Writes of a session's records go through the context's one fenced write path.
 */
export function sqliteStore(db: HostDb, sqlite: Database.Database, fence: SessionFence = NO_FENCE): SqliteStore {
  const c = sqliteContext(db, sqlite, fence);
  return Object.assign(
    {},
      sqliteAgenda(c),
      sqliteBlobs(c),
      sqliteDisplays(c),
      sqliteEffects(c),
      sqliteEvents(c),
      sqliteExecutions(c),
      sqliteFrontiers(c),
      sqliteHeaders(c),
      sqliteIncidents(c),
      sqliteKernel(c),
      sqliteLogView(c),
      sqliteModelRequests(c),
      sqliteOrientation(c),
      sqlitePeerExchange(c),
      sqlitePeerRequests(c),
      sqlitePeers(c),
      sqliteRecovery(c),
      sqliteRemote(c),
      sqliteRequests(c),
      sqliteSessionViews(c),
      sqliteTelemetry(c),
      sqliteTranscribe(c),
      sqliteTranscript(c),
      sqliteTurn(c),
      sqliteWaits(c),
      sqliteWorkItems(c),
    {
      dialect: "sqlite" as const,
      db,
      sqlite,
      close: async () => {
        if (sqlite.open) sqlite.close();
      },
    },
  );
}
