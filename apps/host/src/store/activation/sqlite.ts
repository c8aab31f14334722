import type Database from "better-sqlite3";
import { eq, inArray } from "drizzle-orm";
import { openActivationStore, type ActivationStoreOptions } from "@klbr/activation";
import type { HostDb } from "../../db/open";
import { blobs, releases } from "../../db/schema";
import { putBlob } from "../blobs";
import { serial } from "../sqlite-serial";
import type { AsyncActivationStore } from "./api";
import { releaseNotFound, releaseRows, storedRelease } from "./release-rows";

/**
 * AsyncActivationStore over SQLite: @klbr/activation's epoch store as it is (its migrations are
 * still the caller's `openActivationStore(...).migrate()`), its answers as promises; releases by
 * digest in the host's `releases` and `blobs` tables (the host's migrations).
 */
export function sqliteActivationStore(sqlite: Database.Database, db: HostDb, options: ActivationStoreOptions = {}): AsyncActivationStore {
  const store = openActivationStore(sqlite, options);
  const now = options.now ?? Date.now;
  return {
    current: async () => store.current(),
    activate: (request, handshake, activateOptions) => store.activate(request, handshake, activateOptions),
    history: async () => store.history(),

    async putRelease(release) {
      const { blobs: files, row } = releaseRows(release);
      // On the connection's queue: never inside a Store transaction that is awaiting something.
      return serial(sqlite, () =>
        sqlite
          .transaction(() => {
            const at = now();
            for (const blob of files) putBlob(db, blob, at);
            const inserted = db.insert(releases).values({ ...row, createdAtMs: at }).onConflictDoNothing().run();
            return { stored: inserted.changes === 1 };
          })
          .immediate(),
      );
    },

    async getRelease(digest) {
      const row = db.select().from(releases).where(eq(releases.digest, digest)).get();
      if (row === undefined) throw releaseNotFound(digest);
      const names = [...new Set(row.files.map((f) => f.blob))];
      const found = new Map(db.select({ digest: blobs.digest, data: blobs.data }).from(blobs).where(inArray(blobs.digest, names)).all().map((b) => [b.digest, b.data]));
      return storedRelease(row, (blob) => found.get(blob));
    },
  };
}
