import type { ActivateOptions, ActivateRequest, ActivationRecord, ActiveRevision, Handshake, Manifest, Release } from "@klbr/activation";

/** One file of a stored release, its bytes read back from the database. */
export interface StoredReleaseFile {
  /** The POSIX relative name inside the release. */
  name: string;
  /** The exact bytes. */
  data: Buffer;
}

/** A release as the database holds it (C21): enough for any host to materialise `releases/<digest>`. */
export interface StoredRelease {
  /** The tree digest (64 lowercase hex), re-checked against `files` when read. */
  digest: string;
  /** The validated manifest. */
  manifest: Manifest;
  /** Sorted by name bytes, as the digest covers them. */
  files: StoredReleaseFile[];
}

/** What `putRelease` did. */
export interface PutReleaseResult {
  /** False when a release with this digest was already stored (its bytes are the same: nothing written). */
  stored: boolean;
}

/**
 * The epoch store as the host needs it over either database (C21): the activation authority
 * (compare-and-swap on the epoch, every attempt in the history, as @klbr/activation's store) and
 * the releases by digest, so a host that did not build a release can still run it.
 * sqlite.ts wraps the package's store; pg.ts is the same over PostgreSQL.
 */
export interface AsyncActivationStore {
  /** The active revision, or null before the first activation. */
  current(): Promise<ActiveRevision | null>;
  /**
   * Verify the release at `request.path`, run the handshake, then switch if the epoch is still
   * `request.expectedEpoch`; exactly one of concurrent attempts on one epoch wins, the others get
   * ACTIVATION_EPOCH_CONFLICT. Every attempt is appended to the history. Throws ActivationError.
   */
  activate(request: ActivateRequest, handshake: Handshake, options?: ActivateOptions): Promise<ActiveRevision>;
  /** Every attempt, oldest first. */
  history(): Promise<ActivationRecord[]>;
  /** Store a verified release's files by digest: each file's bytes once in `blobs`, the release once in `releases`. */
  putRelease(release: Release): Promise<PutReleaseResult>;
  /** A stored release, byte-exact; HostError RELEASE_NOT_FOUND when none has this digest. */
  getRelease(digest: string): Promise<StoredRelease>;
}
