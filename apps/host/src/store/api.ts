/**
 * The store's one API for both dialects (C21, ARCHITECTURE "How the host grows"). Every method is
 * async: better-sqlite3 answers at once, PostgreSQL does not, and callers are written once for
 * both. All SQL stays in store/; a transaction is one method here, never a runtime service's.
 *
 * Implementations: `SqliteStore` (store/sqlite/, over the synchronous functions of store/*.ts)
 * and `PgStore` (store/pg/). A write of a session's records goes through each implementation's
 * one fenced write path with the key its `SessionFence` gives (LEASE_LOST when the lease moved).
 */
import type { LeaseKey } from "./leases/types";
import type { AgendaStore } from "./api/agenda";
import type { BlobsStore } from "./api/blobs";
import type { DisplaysStore } from "./api/displays";
import type { EffectsStore } from "./api/effects";
import type { EventsStore } from "./api/events";
import type { ExecutionsStore } from "./api/executions";
import type { FrontiersStore } from "./api/frontiers";
import type { HeadersStore } from "./api/headers";
import type { IncidentsStore } from "./api/incidents";
import type { KernelStore } from "./api/kernel";
import type { LogViewStore } from "./api/log-view";
import type { ModelRequestsStore } from "./api/model-requests";
import type { OrientationStore } from "./api/orientation";
import type { PeerExchangeStore } from "./api/peer-exchange";
import type { PeerRequestsStore } from "./api/peer-requests";
import type { PeersStore } from "./api/peers";
import type { RecoveryStore } from "./api/recovery";
import type { RemoteStore } from "./api/remote";
import type { RequestsStore } from "./api/requests";
import type { SessionViewsStore } from "./api/session-views";
import type { TelemetryStore } from "./api/telemetry";
import type { TranscribeStore } from "./api/transcribe";
import type { TranscriptStore } from "./api/transcript";
import type { TurnStore } from "./api/turn";
import type { WaitsStore } from "./api/waits";
import type { WorkItemsStore } from "./api/work-items";

export type {
  AgendaStore,
  BlobsStore,
  DisplaysStore,
  EffectsStore,
  EventsStore,
  ExecutionsStore,
  FrontiersStore,
  HeadersStore,
  IncidentsStore,
  KernelStore,
  LogViewStore,
  ModelRequestsStore,
  OrientationStore,
  PeerExchangeStore,
  PeerRequestsStore,
  PeersStore,
  RecoveryStore,
  RemoteStore,
  RequestsStore,
  SessionViewsStore,
  TelemetryStore,
  TranscribeStore,
  TranscriptStore,
  TurnStore,
  WaitsStore,
  WorkItemsStore,
};

/**
 * Which lease a session's writes are fenced by (C21). Null: no lease mode (one host, SQLite),
 * the write runs as it always did. A key: the write runs in one transaction with the check that
 * the key still holds the lease, and fails with HostError LEASE_LOST (nothing written) otherwise.
 */
export interface SessionFence {
  keyFor(sessionId: string): LeaseKey | null;
}

/** The fence of a host without leases: every write as today. */
export const NO_FENCE: SessionFence = { keyFor: () => null };

/** Every record operation the host needs, one family per record kind. */
export interface Store
  extends AgendaStore,
    BlobsStore,
    DisplaysStore,
    EffectsStore,
    EventsStore,
    ExecutionsStore,
    FrontiersStore,
    HeadersStore,
    IncidentsStore,
    KernelStore,
    LogViewStore,
    ModelRequestsStore,
    OrientationStore,
    PeerExchangeStore,
    PeerRequestsStore,
    PeersStore,
    RecoveryStore,
    RemoteStore,
    RequestsStore,
    SessionViewsStore,
    TelemetryStore,
    TranscribeStore,
    TranscriptStore,
    TurnStore,
    WaitsStore,
    WorkItemsStore {
  /** Which dialect this store speaks (a few callers report it; none branches on it for SQL). */
  readonly dialect: "sqlite" | "postgres";
  /** Close the connection(s). */
  close(): Promise<void>;
}
