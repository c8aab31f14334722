import type { BlobRow, NewBlob } from "../blobs";

/** Blobs records (store/blobs.ts). */
export interface BlobsStore {
  /** Store a blob unless one with its digest is there already (the caller's transaction holds it with what names it). */
  putBlob(blob: NewBlob, atMs: number): Promise<void>;
  /** One blob by its full digest. */
  getBlob(digest: string): Promise<BlobRow | undefined>;
  /**
   * The digests starting with `sha256:<hexPrefix>`: at most two (two say the prefix is ambiguous).
   * `hexPrefix` is lower-case hex.
   */
  blobsByPrefix(hexPrefix: string): Promise<string[]>;
  /**
   * The blob `digest` names: `sha256:<hex>` or bare hex, whole or a unique prefix of at least
   * {@link MIN_DIGEST_PREFIX} digits. DISPLAY_NOT_FOUND when it names none (or is not a digest),
   * DISPLAY_DIGEST_AMBIGUOUS when a prefix names several.
   */
  resolveBlob(digest: string): Promise<BlobRow>;
}
