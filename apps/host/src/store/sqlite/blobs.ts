import { putBlob, getBlob, blobsByPrefix, resolveBlob } from "../blobs";
import type { BlobsStore } from "../api/blobs";
import type { SqliteContext } from "./context";

/** BlobsStore over the synchronous SQLite functions. */
export function sqliteBlobs(c: SqliteContext): BlobsStore {
  return {
    putBlob: async (blob, atMs) => putBlob(c.db, blob, atMs),
    getBlob: async (digest) => getBlob(c.db, digest),
    blobsByPrefix: async (hexPrefix) => blobsByPrefix(c.db, hexPrefix),
    resolveBlob: async (digest) => resolveBlob(c.db, digest),
  };
}
