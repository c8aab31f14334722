import { sql } from "drizzle-orm";
import type { HostDb } from "../db/open";

/** A named placeholder of a prepared statement, typed loosely enough for drizzle's value builders. */
export const placeholder = (name: string) => sql.placeholder(name) as never;

/**
 * Statements prepared once per connection (building a query through drizzle on every call costs
 * far more than running it): returns a getter that prepares `prepare(db)` on its first call for
 * that connection and hands back the same statements after.
 */
export function preparedPerConnection<T>(prepare: (db: HostDb) => T): (db: HostDb) => T {
  const cache = new WeakMap<HostDb, T>();
  return (db) => {
    let statements = cache.get(db);
    if (!statements) {
      statements = prepare(db);
      cache.set(db, statements);
    }
    return statements;
  };
}
