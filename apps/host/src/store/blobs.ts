import { createHash } from "node:crypto";
import { and, eq, gte, lt } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { HostError } from "../errors";
import { blobs } from "../db/schema";
import { placeholder, preparedPerConnection } from "./prepared";

/** One stored blob (C20): a display bundle's JSON or an image's decoded bytes. */
export type BlobRow = typeof blobs.$inferSelect;

/** A blob to store: its digest is that of `data`. */
export interface NewBlob {
  digest: string;
  mediaType: string;
  data: Buffer;
}

/** `sha256:<64 hex>` of some bytes: a blob's name. */
export function blobDigest(data: Buffer): string {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

const statements = preparedPerConnection((db: HostDb) => {
  const p = placeholder;
  return {
    // Content-addressed: a blob already there is the same bytes, so a second copy is never written.
    put: db
      .insert(blobs)
      .values({ digest: p("digest"), mediaType: p("mediaType"), bytes: p("bytes"), data: p("data"), createdAtMs: p("createdAtMs") })
      .onConflictDoNothing()
      .prepare(),
    byDigest: db.select().from(blobs).where(eq(blobs.digest, p("digest"))).prepare(),
    // Digests share the `sha256:` prefix and hex sorts as text: a prefix is a key range.
    byPrefix: db
      .select({ digest: blobs.digest })
      .from(blobs)
      .where(and(gte(blobs.digest, p("from")), lt(blobs.digest, p("to"))))
      .limit(2)
      .prepare(),
  };
});

/** Store a blob unless one with its digest is there already (the caller's transaction holds it with what names it). */
export function putBlob(db: HostDb, blob: NewBlob, atMs: number): void {
  statements(db).put.run({ digest: blob.digest, mediaType: blob.mediaType, bytes: blob.data.length, data: blob.data, createdAtMs: atMs });
}

/** One blob by its full digest. */
export function getBlob(db: HostDb, digest: string): BlobRow | undefined {
  return statements(db).byDigest.get({ digest }) as BlobRow | undefined;
}

/**
 * The digests starting with `sha256:<hexPrefix>`: at most two (two say the prefix is ambiguous).
 * `hexPrefix` is lower-case hex.
 */
export function blobsByPrefix(db: HostDb, hexPrefix: string): string[] {
  const from = `sha256:${hexPrefix}`;
  // "g" sorts after every hex digit, so [from, from + "g") is every digest with the prefix.
  const rows = statements(db).byPrefix.all({ from, to: `${from}g` }) as Array<{ digest: string }>;
  return rows.map((r) => r.digest);
}

/** The shortest digest prefix `klbr display get` and `blob_get` accept (hex digits). */
export const MIN_DIGEST_PREFIX = 12;

/**
 * The blob `digest` names: `sha256:<hex>` or bare hex, whole or a unique prefix of at least
 * {@link MIN_DIGEST_PREFIX} digits. DISPLAY_NOT_FOUND when it names none (or is not a digest),
 * DISPLAY_DIGEST_AMBIGUOUS when a prefix names several.
 */
export function resolveBlob(db: HostDb, digest: string): BlobRow {
  const hex = digest.trim().replace(/^sha256:/i, "").toLowerCase();
  if (!/^[0-9a-f]+$/.test(hex) || hex.length < MIN_DIGEST_PREFIX || hex.length > 64) {
    throw new HostError("DISPLAY_NOT_FOUND", `${JSON.stringify(digest)} is not a display digest: give sha256:<64 hex digits> (or at least ${MIN_DIGEST_PREFIX} of them), as \`klbr log\` and \`klbr exec\` print it`);
  }
  const found = hex.length === 64 ? [`sha256:${hex}`] : blobsByPrefix(db, hex);
  if (found.length > 1) throw new HostError("DISPLAY_DIGEST_AMBIGUOUS", `sha256:${hex} is the start of more than one stored digest: give more digits`);
  const row = found.length === 1 ? getBlob(db, found[0]!) : undefined;
  if (!row) throw new HostError("DISPLAY_NOT_FOUND", `no stored display or image has digest sha256:${hex}${hex.length < 64 ? "..." : ""}`);
  return row;
}
