import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * What a host writes to its data directory and every host must be able to materialise (C21):
 * behaviour releases and managed skills, by digest, their bytes in `blobs` (schema-blobs.ts) so a
 * file shared by two releases is stored once. The same tables are in PostgreSQL (pg-schema.ts).
 */

/** One file of a release: its path inside the release, its size, and the blob holding its bytes. */
export interface ReleaseFile {
  name: string;
  size: number;
  /** `sha256:<hex>` of the file's bytes: its row in `blobs`. */
  blob: string;
}

/** Behaviour releases (`releases/<digest>`): immutable, named by the digest of their tree (@klbr/activation). */
export const releases = sqliteTable("releases", {
  /** 64 lowercase hex: the tree digest, also the directory name a host materialises it under. */
  digest: text("digest").primaryKey(),
  /** The validated manifest, as the release's manifest file says it. */
  manifest: text("manifest", { mode: "json" }).notNull(),
  /** ReleaseFile[] sorted by name bytes, as the digest covers them. */
  files: text("files", { mode: "json" }).$type<ReleaseFile[]>().notNull(),
  createdAtMs: integer("created_at_ms").notNull(),
});

/** Managed skills (`<data>/skills/<id>/SKILL.md`, C4): one row per id, its SKILL.md in `blobs`. */
export const managedSkills = sqliteTable("managed_skills", {
  id: text("id").primaryKey(),
  /** sha256 hex of SKILL.md's bytes (the skills index's digest); the blob is `sha256:<digest>`. */
  digest: text("digest").notNull(),
  updatedAtMs: integer("updated_at_ms").notNull(),
});
