import type { PgHost } from "../../db/pg-open";
import { NO_FENCE, type SessionFence, type Store } from "../api";
import { pgAgenda } from "./agenda";
import { pgBlobs } from "./blobs";
import { pgContext } from "./context";
import { pgDisplays } from "./displays";
import { pgEffects } from "./effects";
import { pgEvents } from "./events";
import { pgExecutions } from "./executions";
import { pgFrontiers } from "./frontiers";
import { pgHeaders } from "./headers";
import { pgIncidents } from "./incidents";
import { pgKernel } from "./kernel";
import { pgModelRequests } from "./model-requests";
import { pgOrientation } from "./orientation";
import { pgPeerExchange } from "./peer-exchange";
import { pgPeerRequests } from "./peer-requests";
import { pgPeers } from "./peers";
import { pgRecovery } from "./recovery";
import { pgRemote } from "./remote";
import { pgRequests } from "./requests";
import { pgTelemetry } from "./telemetry";
import { pgTranscribe } from "./transcribe";
import { pgTranscript } from "./transcript";
import { pgTurn } from "./turn";
import type { ReconnectPolicy } from "./tx";
import { pgViews } from "./views";
import { pgWaits } from "./waits";
import { pgWorkItems } from "./work-items";

/** PgStore's own: the pool and drizzle handle it runs on (tests and the lease store reach them). */
export interface PgStore extends Store {
  readonly dialect: "postgres";
  readonly pg: PgHost;
}

/**
 * The Store over PostgreSQL (C21): the same records as SqliteStore (pg-schema.ts), every write of
 * a session's records one transaction fenced by the key `fence` gives (store/pg/tx.ts: the lease
 * row locked FOR SHARE and checked in the transaction's first round trip, LEASE_LOST otherwise),
 * every statement carried across a dropped connection. `close` ends the pool.
 */
export function pgStore(pg: PgHost, fence: SessionFence = NO_FENCE, policy?: ReconnectPolicy): PgStore {
  const c = pgContext(pg.db, pg.pool, fence, policy);
  const transcript = pgTranscript(c);
  return Object.assign(
    {},
    pgAgenda(c),
    pgBlobs(c),
    pgDisplays(c),
    pgEffects(c),
    pgEvents(c),
    pgExecutions(c),
    pgFrontiers(c),
    pgHeaders(c),
    pgIncidents(c),
    pgKernel(c),
    pgModelRequests(c),
    pgOrientation(c),
    pgPeerExchange(c),
    pgPeerRequests(c),
    pgPeers(c),
    pgRecovery(c),
    pgRemote(c),
    pgRequests(c),
    pgTelemetry(c),
    pgTranscribe(c),
    transcript,
    pgTurn(c),
    pgViews(c, transcript),
    pgWaits(c),
    pgWorkItems(c),
    { dialect: "postgres" as const, pg, close: () => pg.close() },
  );
}
