import type Database from "better-sqlite3";

/**
 * One queue per SQLite connection for the async store API. better-sqlite3 is one synchronous
 * connection: a transaction whose body awaits would take in any statement run meanwhile, so every
 * async unit of work on a connection runs here, one at a time, in call order.
 */
const tails = new WeakMap<Database.Database, Promise<unknown>>();

const settle = () => {};

/** Run `fn` after every unit queued before it on `sqlite`; its result or error is the caller's. */
export function serial<T>(sqlite: Database.Database, fn: () => T | Promise<T>): Promise<T> {
  const tail = tails.get(sqlite) ?? Promise.resolve();
  const result = tail.then(fn);
  tails.set(sqlite, result.then(settle, settle));
  return result;
}

/**
 * An async transaction on the queue: BEGIN IMMEDIATE (the write lock up front, since the body
 * reads then writes), the body, COMMIT; ROLLBACK when it throws.
 */
export function serialTransaction<T>(sqlite: Database.Database, fn: () => Promise<T>): Promise<T> {
  return serial(sqlite, async () => {
    sqlite.exec("BEGIN IMMEDIATE");
    try {
      const result = await fn();
      sqlite.exec("COMMIT");
      return result;
    } catch (error) {
      if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
      throw error;
    }
  });
}
