// The Store a reading command opens on its own (`klbr log`, `klbr display get`, `klbr web`: no
// daemon needed): the database chosen as `klbr serve` chooses it (C21), opened for reading only.
import { existsSync } from "node:fs";
import { databaseChoice, type DatabaseChoice } from "../db/database-url";
import { HostError } from "../errors";
import { dataLayout } from "../paths";
import type { Store } from "../store/api";
import type { LogViewStore } from "../store/api/log-view";
import type { CommonOptions } from "./command";
import { dataDirOf } from "./target";

/** The options a reading command takes beside the data directory: the same as serve's. */
export interface DatabaseOptions {
  /** `--database URL` (default KLBR_DATABASE_URL): a PostgreSQL database. */
  database?: string;
  /** `--sqlite-file FILE`: the SQLite log hosts share, instead of the data directory's. */
  sqliteFile?: string;
}

/** What was opened, and where, for messages. */
export interface ReadStore {
  store: Store;
  /** The SQLite file or the PostgreSQL URL (its password hidden). */
  shown: string;
}

/**
 * Open the log a command reads: PostgreSQL when `--database` or KLBR_DATABASE_URL says so (never
 * migrated from here: a reader does not change the schema; a database no host has set up is
 * HOST_NOT_RUNNING), else the SQLite file, read-only (HOST_NOT_RUNNING when it does not exist).
 */
export async function openReadStore(opts: CommonOptions & DatabaseOptions): Promise<ReadStore> {
  const { choice, file } = chosen(opts);
  return readStoreOf(choice, file);
}

/** As openReadStore, for `klbr log`: on SQLite only the log views, so a quick command loads no more than it reads. */
export async function openLogReader(opts: CommonOptions & DatabaseOptions): Promise<LogViewStore & { close(): Promise<void> }> {
  const { choice, file } = chosen(opts);
  if (choice.kind === "postgres") return (await readStoreOf(choice, file)).store;
  const { readOnlySqliteLog } = await import("../store/sqlite/read-only-log");
  return readOnlySqliteLog(file);
}

/** The database the options name, and the SQLite file (checked to exist when it is the choice). */
function chosen(opts: CommonOptions & DatabaseOptions): { choice: DatabaseChoice; file: string } {
  const choice = databaseChoice(opts.database);
  if (choice.kind === "postgres" && opts.sqliteFile !== undefined) throw new HostError("CLI_USAGE", "--sqlite-file and --database name two logs: give one");
  const file = opts.sqliteFile ?? dataLayout(dataDirOf(opts)).database;
  if (choice.kind === "sqlite" && !existsSync(file)) throw new HostError("HOST_NOT_RUNNING", `no klbr database at ${file}; run \`klbr init\` first`);
  return { choice, file };
}

/** A reader of `choice` (SQLite: the log at `file`, read-only), beside the host that writes it or without one. */
export async function readStoreOf(choice: DatabaseChoice, file: string): Promise<ReadStore> {
  if (choice.kind === "postgres") {
    const { readPostgres } = await import("../store/pg/connect");
    const { pgStore } = await import("../store/pg");
    return { store: pgStore(await readPostgres(choice, { max: 2 })), shown: choice.shown };
  }
  const { readOnlySqliteStore } = await import("../store/sqlite/read-only");
  return { store: readOnlySqliteStore(file), shown: file };
}

/** Register `--database` and `--sqlite-file` on a reading command, worded as serve's. */
export function databaseOptions<C extends { option(flags: string, description: string): C }>(command: C): C {
  return command
    .option("--database <url>", "read the records in this PostgreSQL database (postgres://USER@HOST:PORT/DB; default KLBR_DATABASE_URL, else SQLite in the data directory) (C21)")
    .option("--sqlite-file <file>", "read the SQLite log in this file instead of the data directory's (hosts sharing one by `klbr serve --sqlite-file`)");
}
