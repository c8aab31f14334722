import type { LogEntry } from "../log-view";

/** A follower of the log (see followLog): each poll the entries new or still open since the last. */
export interface StoreLogFollower {
  /** The first poll returns what `readLog` returns; later ones what was written since, and the rows still open as they are now. */
  poll(): Promise<LogEntry[]>;
  /** Rows the database returned so far, over every poll (a seam for tests and measurements). */
  readonly rowsRead: number;
}

/** LogView records (store/log-view.ts). */
export interface LogViewStore {
  /** Every log entry, oldest first (entries at the same instant keep table order). */
  readLog(): Promise<LogEntry[]>;
  /**
   * A follower over the log tables. Per table it keeps the highest rowid it has read (every table
   * here is a rowid table, and no row is ever deleted, so a new row always has a higher rowid; for
   * the INTEGER PRIMARY KEY tables rowid is their id) and asks only for rows above it
   * (`rowid > ?`, a range search on the table's own b-tree).
   *
   * Rows updated in place after they were written can change their key, and then `klbr log
   * --follow` prints them again (an execution that ends, a request that is answered, a wait that
   * wakes). The follower remembers the rowids of the rows it last read open and re-reads those,
   * one `rowid = ?` lookup each, until they close. Selecting `status = 'running'` through the
   * index instead would miss exactly the rows that closed since the last poll, and an "updated
   * after the last poll" stamp would depend on clocks and on when the writer took the stamp
   * relative to its commit; a single `rowid > ? OR rowid IN (...)` statement makes SQLite scan the
   * whole table. Every statement is prepared once, here.
   */
  followLog(): Promise<StoreLogFollower>;
}
