// `klbr log` over PostgreSQL (C21): the same entries as store/log-view.ts, from the same table list
// and the same row mapping, the rows read in SQLite's shape (row-shape.ts).
import { asc, getTableColumns, getTableName, inArray, is, sql, type SQL } from "drizzle-orm";
import { PgTable, type PgColumn } from "drizzle-orm/pg-core";
import * as pgSchema from "../../db/pg-schema";
import type { LogViewStore, StoreLogFollower } from "../api/log-view";
import { LOG_TABLES, type LogEntry, type LogTable } from "../log-view";
import type { PgContext } from "./context";
import { sqliteShaped } from "./row-shape";
import type { PgHostDb } from "../../db/pg-open";

/** One drizzle transaction on the pool. */
type ReadTx = Parameters<Parameters<PgHostDb["transaction"]>[0]>[0];

type Row = Record<string, unknown>;

/** One log table as PostgreSQL has it: its key, its select in SQLite's row shape, its order. */
interface PgLogTable {
  q: LogTable;
  table: PgTable;
  key: PgColumn;
  fields: Record<string, PgColumn | SQL>;
  order: PgColumn[];
}

// The column a text-keyed table's rows were created at: SQLite reads such a table in rowid
// (insertion) order, which PostgreSQL does not keep; creation time, then the key, is the nearest.
const CREATED = ["started_at_ms", "created_at_ms", "opened_at_ms", "staged_at_ms", "requested_at_ms", "sent_at_ms", "at_ms"];

function pgLogTable(q: LogTable, table: PgTable): PgLogTable {
  const columns = Object.values(getTableColumns(table)) as PgColumn[];
  const key = columns.find((c) => c.primary)!;
  const fields = sqliteShaped(table);
  // An identity key counts up in insertion order, as SQLite's rowid does.
  const created = columns.find((c) => CREATED.includes(c.name));
  const order = key.dataType === "number" || !created ? [key] : [created, key];
  return { q, table, key, fields, order };
}

/** The log tables PostgreSQL has (@klbr/activation's history stays in SQLite: it is not in pg-schema). */
function pgLogTables(): PgLogTable[] {
  const byName = new Map<string, PgTable>();
  for (const t of Object.values(pgSchema)) if (is(t, PgTable)) byName.set(getTableName(t), t);
  return LOG_TABLES.flatMap((q) => {
    const table = byName.get(q.from.replace(/"/g, ""));
    return table ? [pgLogTable(q, table)] : [];
  });
}

const byTime = (entries: LogEntry[]) => entries.sort((a, b) => a.at_ms - b.at_ms);

// The row's transaction id against the oldest transaction the last poll could not see yet, modulo
// 2^32 as PostgreSQL compares xids: every row inserted or updated since that poll's snapshot has an
// xmin at or after it (a transaction older than a snapshot's xmin had ended when it was taken).
const changedSince = (low: number) => sql`((xmin::text::bigint - ${low}::bigint + 4294967296) % 4294967296) < 2147483648`;

/**
 * A follower over PostgreSQL, with SQLite's follower's answers (store/api/log-view.ts). PostgreSQL
 * has no rowid, and an identity key is not in commit order (a row numbered 5 may commit after 6),
 * so "rows above the last key" would lose a row. Each poll is one REPEATABLE READ snapshot instead;
 * it asks only for the rows whose xmin is not older than the previous poll's snapshot xmin (new and
 * updated rows, and a few more while some other transaction stays open), plus the rows it read
 * open, by key. A row read closed is never answered again, as SQLite's rowid watermark never does;
 * which rows those were is remembered by key.
 */
function pgFollower(c: PgContext, tables: PgLogTable[]): StoreLogFollower {
  const state = tables.map(() => ({ open: [] as unknown[], closed: new Set<unknown>() }));
  let low: number | null = null;
  let rowsRead = 0;
  const poll = async (tx: ReadTx): Promise<LogEntry[]> => {
    const snap = (await tx.execute<{ low: number }>(sql`SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::bigint % 4294967296) AS low`)).rows[0];
    const entries: LogEntry[] = [];
    for (const [i, t] of tables.entries()) {
      const s = state[i]!;
      const select = () => tx.select({ ...t.fields, __key: t.key }).from(t.table);
      const again = s.open.length > 0 ? ((await select().where(inArray(t.key, s.open)).orderBy(...t.order.map((o) => asc(o)))) as Row[]) : [];
      const fresh = (await (low === null ? select() : select().where(changedSince(low))).orderBy(...t.order.map((o) => asc(o)))) as Row[];
      const reread = new Set(again.map((r) => r.__key));
      const rows = [...again, ...fresh.filter((r) => !reread.has(r.__key) && !s.closed.has(r.__key))];
      rowsRead += again.length + fresh.length;
      s.open = [];
      for (const { __key: key, ...row } of rows) {
        if (t.q.open?.(row)) s.open.push(key);
        else s.closed.add(key);
        entries.push(t.q.map(row));
      }
    }
    low = snap!.low;
    return byTime(entries);
  };
  return {
    poll: () => c.read((db) => db.transaction(poll, { isolationLevel: "repeatable read", accessMode: "read only" })),
    get rowsRead() {
      return rowsRead;
    },
  };
}

/** LogViewStore over PostgreSQL. */
export function pgLogView(c: PgContext): LogViewStore {
  const tables = pgLogTables();
  return {
    readLog: () =>
      c.read(async (db) => {
        const entries: LogEntry[] = [];
        for (const t of tables) for (const row of (await db.select(t.fields).from(t.table).orderBy(...t.order.map((o) => asc(o)))) as Row[]) entries.push(t.q.map(row));
        return byTime(entries);
      }),
    followLog: async () => pgFollower(c, tables),
  };
}
