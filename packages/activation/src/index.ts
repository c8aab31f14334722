// @klbr/activation: what code a hooks worker runs with. Source digests, admission, the manifest,
// immutable releases, and the epoch store that switches between them.

// Errors
export { ACTIVATION_ERROR_CODES, ActivationError, isActivationError } from "./errors.js";
export type { ActivationErrorCode, ActivationErrorDetails } from "./errors.js";

// Limits
export { DIGEST_PATTERN, MANIFEST_FILE, MAX_SOURCE_BYTES, MAX_SOURCE_FILES, SOURCE_EXTENSIONS } from "./limits.js";

// Digest (pure)
export { compareNames, digestEntries } from "./digest.js";
export type { DigestEntry } from "./digest.js";

// Admission and the digest of a tree on disk
export { MAX_WALK_ENTRIES, digestSourceFiles, scanSource, sourceDigest } from "./scan.js";
export type { SourceDigest, SourceFile } from "./scan.js";

// Manifest (C5)
export { ENTRYPOINT_PATTERN, MANIFEST_SLOTS, decodeManifest, manifestPackage, parseManifest, readManifest } from "./manifest.js";
export type { Manifest, ManifestSlot } from "./manifest.js";

// Releases
export { snapshotRelease, verifyRelease } from "./release.js";
export type { Release, Snapshot } from "./release.js";

// The epoch store
export { DEFAULT_BUSY_TIMEOUT_MS, openDatabase } from "./database.js";
export { ACTIVATION_MIGRATIONS_TABLE, activationMigrationsFolder } from "./migrations.js";
export { activationHistory, activationState } from "./schema.js";
export { DEFAULT_HANDSHAKE_TIMEOUT_MS, conflictError, openActivationStore, runHandshake } from "./store.js";
export type {
  ActivateOptions,
  ActivateRequest,
  ActivationOutcome,
  ActivationRecord,
  ActivationStore,
  ActivationStoreOptions,
  ActiveRevision,
  Handshake,
} from "./store.js";
