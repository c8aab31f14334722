/** At most this many files in one behaviour source. */
export const MAX_SOURCE_FILES = 128;

/** At most this many content bytes in one behaviour source, all files together (2 MiB). */
export const MAX_SOURCE_BYTES = 2 * 1024 * 1024;

/** The only file extensions a behaviour source may hold. */
export const SOURCE_EXTENSIONS: readonly string[] = [".py", ".json", ".md"];

/** The manifest's file name at the root of a source tree (C5). */
export const MANIFEST_FILE = "manifest.json";

/** A source digest: 64 lowercase hex characters (C2). */
export const DIGEST_PATTERN = /^[0-9a-f]{64}$/;
