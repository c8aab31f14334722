import type Database from "better-sqlite3";
import { openActivationStore } from "@klbr/activation";
import type { DatabaseChoice } from "../db/database-url";
import { migrateHostDb, openHostDatabase, type HostDb } from "../db/open";
import { openPostgres } from "../db/pg-open";
import { HostError } from "../errors";
import type { SessionFence, Store } from "./api";
import type { AsyncActivationStore } from "./activation/api";
import { pgActivationStore } from "./activation/pg";
import { sqliteActivationStore } from "./activation/sqlite";
import { pgLeases, sqliteLeases, type LeaseStore } from "./leases";
import { pgStore } from "./pg";
import { migrateAtStart } from "./pg/connect";
import { sqliteStore } from "./sqlite";

/** The PostgreSQL database a host keeps its records in (C21: `klbr serve --database`). */
export type PostgresChoice = Extract<DatabaseChoice, { kind: "postgres" }>;

/**
 * Everything a host keeps in its database, on one dialect: the records (Store), the session
 * leases and host registry, and the activation authority with the releases by digest.
 */
export interface HostLog {
  readonly dialect: "sqlite" | "postgres";
  readonly store: Store;
  readonly leases: LeaseStore<unknown>;
  readonly activation: AsyncActivationStore;
  /** The SQLite connection when the log is SQLite (embedded tests read it directly), else null. */
  readonly sqlite: { db: HostDb; sqlite: Database.Database } | null;
  /** Ready for the host's start: PostgreSQL's migrations under the advisory lock (SQLite's ran at open). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** How a host's log is opened. */
export interface HostLogOptions {
  /** The SQLite file, when the log is SQLite. */
  sqliteFile: string;
  /** The PostgreSQL database instead, when given. */
  postgres?: PostgresChoice;
  /** The fence every session write is checked against (the host's leases). */
  fence: SessionFence;
  /** Where a PostgreSQL connection error that no query waits on is told (a server restart, say). */
  onConnectionError?: (error: Error) => void;
}

/**
 * Open a host's log. SQLite: the file opened and migrated (the host's migrations, then
 * @klbr/activation's), at once. PostgreSQL: the pool opened now (nothing is sent yet), its
 * migrations run by `ready()` under the advisory lock, so several hosts may start together.
 */
export function openHostLog(options: HostLogOptions): HostLog {
  return options.postgres ? postgresLog(options.postgres, options) : sqliteLog(options);
}

function sqliteLog(options: HostLogOptions): HostLog {
  const sqlite = openHostDatabase(options.sqliteFile);
  try {
    const db = migrateHostDb(sqlite);
    openActivationStore(sqlite).migrate();
    return {
      dialect: "sqlite",
      store: sqliteStore(db, sqlite, options.fence),
      leases: sqliteLeases(db, sqlite) as LeaseStore<unknown>,
      activation: sqliteActivationStore(sqlite, db),
      sqlite: { db, sqlite },
      ready: async () => undefined,
      close: async () => void sqlite.close(),
    };
  } catch (error) {
    sqlite.close();
    throw error;
  }
}

function postgresLog(choice: PostgresChoice, options: HostLogOptions): HostLog {
  const pg = openPostgres(choice.url, options.onConnectionError ? { onError: options.onConnectionError } : {});
  return {
    dialect: "postgres",
    store: pgStore(pg, options.fence),
    leases: pgLeases(pg.db) as LeaseStore<unknown>,
    activation: pgActivationStore(pg),
    sqlite: null,
    ready: () => migrateAtStart(pg, choice.shown),
    close: () => pg.close(),
  };
}

/** The SQLite handle of a log, for what only SQLite has (embedded tests' direct reads); STORE_NOT_SQLITE on PostgreSQL. */
export function sqliteOf(log: HostLog): { db: HostDb; sqlite: Database.Database } {
  if (log.sqlite) return log.sqlite;
  throw new HostError("STORE_NOT_SQLITE", "this host keeps its records in PostgreSQL: read them through its Store");
}
