import { blob, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Display blobs (C20), content-addressed: a display's bundle (its JSON, images by reference) and
 * each image's decoded bytes, each stored once by the sha256 of what is stored (`sha256:<hex>`),
 * so a plot shown in 200 cells is one row. The same table is in PostgreSQL (pg-schema.ts, bytea).
 */
export const blobs = sqliteTable("blobs", {
  digest: text("digest").primaryKey(),
  mediaType: text("media_type").notNull(),
  /** Length of `data`. */
  bytes: integer("bytes").notNull(),
  data: blob("data", { mode: "buffer" }).notNull(),
  /** When the first copy was stored. */
  createdAtMs: integer("created_at_ms").notNull(),
});
