// `blob_get` (C20): a stored display's bundle or an image's bytes, by digest or by a unique prefix
// of at least 12 hex digits (what `klbr display get` accepts), base64 in the reply.
import type { HostDb } from "../db/open";
import { resolveBlob } from "../store/blobs";

/** The `blob_get` reply. */
export interface BlobReply {
  digest: string;
  media_type: string;
  base64: string;
}

/** The blob a digest (or unique prefix) names; DISPLAY_NOT_FOUND when none does. */
export function blobReply(db: HostDb, digest: string): BlobReply {
  const row = resolveBlob(db, digest);
  return { digest: row.digest, media_type: row.mediaType, base64: row.data.toString("base64") };
}
