import { and, eq, sql } from "drizzle-orm";
import { blobs } from "../../db/pg-schema";
import type { BlobsStore } from "../api/blobs";
import { MIN_DIGEST_PREFIX, type BlobRow, type NewBlob } from "../blobs";
import { HostError } from "../../errors";
import type { PgContext, Q } from "./context";

/** Store a blob on `q` unless its digest is there (content-addressed: the same bytes). */
export async function putBlobOn(q: Q, blob: NewBlob, atMs: number): Promise<void> {
  await q.insert(blobs).values({ digest: blob.digest, mediaType: blob.mediaType, bytes: blob.data.length, data: blob.data, createdAtMs: atMs }).onConflictDoNothing();
}

/** BlobsStore over PostgreSQL: the same digests and errors as store/blobs.ts. */
export function pgBlobs(c: PgContext): BlobsStore {
  const getBlob = (digest: string) => c.read(async (db) => (await db.select().from(blobs).where(eq(blobs.digest, digest)))[0] as BlobRow | undefined);
  const blobsByPrefix = (hexPrefix: string) =>
    c.read(async (db) => {
      const from = `sha256:${hexPrefix}`;
      // Compared under COLLATE "C" (bytes), whatever the database's collation: "g" sorts after every hex digit then.
      const rows = await db
        .select({ digest: blobs.digest })
        .from(blobs)
        .where(and(sql`${blobs.digest} COLLATE "C" >= ${from}`, sql`${blobs.digest} COLLATE "C" < ${`${from}g`}`))
        .limit(2);
      return rows.map((r) => r.digest);
    });
  return {
    putBlob: (blob, atMs) => c.writeHost((tx) => putBlobOn(tx, blob, atMs)),
    getBlob,
    blobsByPrefix,
    resolveBlob: async (digest) => {
      const hex = digest.trim().replace(/^sha256:/i, "").toLowerCase();
      if (!/^[0-9a-f]+$/.test(hex) || hex.length < MIN_DIGEST_PREFIX || hex.length > 64) {
        throw new HostError("DISPLAY_NOT_FOUND", `${JSON.stringify(digest)} is not a display digest: give sha256:<64 hex digits> (or at least ${MIN_DIGEST_PREFIX} of them), as \`klbr log\` and \`klbr exec\` print it`);
      }
      const found = hex.length === 64 ? [`sha256:${hex}`] : await blobsByPrefix(hex);
      if (found.length > 1) throw new HostError("DISPLAY_DIGEST_AMBIGUOUS", `sha256:${hex} is the start of more than one stored digest: give more digits`);
      const row = found.length === 1 ? await getBlob(found[0]!) : undefined;
      if (!row) throw new HostError("DISPLAY_NOT_FOUND", `no stored display or image has digest sha256:${hex}${hex.length < 64 ? "..." : ""}`);
      return row;
    },
  };
}
