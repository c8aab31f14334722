// `blob_get` (C20): a stored display's bundle or an image's bytes, by digest or by a unique prefix
// of at least 12 hex digits (what `klbr display get` accepts), base64 in the reply.
import type { BlobRow } from "../store/blobs";
import type { BlobsStore } from "../store/api";
import { readOnlySqliteStore } from "../store/sqlite/read-only";

/** The `blob_get` reply. */
export interface BlobReply {
  digest: string;
  media_type: string;
  base64: string;
}

/** The blob a digest (or unique prefix) names; DISPLAY_NOT_FOUND when none does. */
export async function blobReply(store: BlobsStore, digest: string): Promise<BlobReply> {
  const row = await store.resolveBlob(digest);
  return { digest: row.digest, media_type: row.mediaType, base64: row.data.toString("base64") };
}

/** The blob a digest names, read straight from the SQLite log at `file` (no daemon needed: `klbr display get`). */
export async function readOnlyBlob(file: string, digest: string): Promise<BlobRow> {
  const store = readOnlySqliteStore(file);
  try {
    return await store.resolveBlob(digest);
  } finally {
    await store.close();
  }
}
