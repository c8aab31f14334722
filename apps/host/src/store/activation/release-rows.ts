import { ActivationError, digestEntries, digestSourceFiles, scanSource, type Manifest, type Release } from "@klbr/activation";
import type { ReleaseFile } from "../../db/schema-artifacts";
import { HostError } from "../../errors";
import { blobDigest, type NewBlob } from "../blobs";
import type { StoredRelease } from "./api";

/** The media type of a release file's blob: releases hold source, and nothing serves it by type. */
export const RELEASE_FILE_MEDIA_TYPE = "application/octet-stream";

/** The rows that store one release: its files' blobs (content-addressed) and its `releases` row. */
export interface ReleaseRows {
  blobs: NewBlob[];
  row: { digest: string; manifest: Manifest; files: ReleaseFile[] };
}

/**
 * Read the release's files from disk and check they are still the tree its digest names: the
 * database must never hold bytes under a digest they do not have (a release edited after it was
 * verified is RELEASE_DIGEST_MISMATCH, nothing stored).
 */
export function releaseRows(release: Release): ReleaseRows {
  const files = scanSource(release.path);
  const { digest } = digestSourceFiles(files);
  if (digest !== release.digest) {
    throw new ActivationError("RELEASE_DIGEST_MISMATCH", `release ${JSON.stringify(release.path)} now holds a tree with digest ${digest}, not ${release.digest}`, { path: release.path });
  }
  const sorted = [...files].sort((a, b) => Buffer.compare(a.nameBytes, b.nameBytes));
  const blobs = sorted.map((f) => ({ digest: blobDigest(f.content), mediaType: RELEASE_FILE_MEDIA_TYPE, data: f.content }));
  const listed = sorted.map((f, i) => ({ name: f.name, size: f.content.length, blob: blobs[i]!.digest }));
  return { blobs, row: { digest, manifest: release.manifest, files: listed } };
}

/** The error for a digest no stored release has. */
export function releaseNotFound(digest: string): HostError {
  return new HostError("RELEASE_NOT_FOUND", `no stored release has digest ${JSON.stringify(digest)}`);
}

/**
 * A stored release from its row and its files' bytes (`data(blob)`; undefined when missing), with
 * the tree digest checked again: a missing or altered blob is RELEASE_CORRUPT, not a wrong tree.
 */
export function storedRelease(row: { digest: string; manifest: unknown; files: ReleaseFile[] }, data: (blob: string) => Buffer | undefined): StoredRelease {
  const files = row.files.map((f) => {
    const bytes = data(f.blob);
    if (bytes === undefined) throw new ActivationError("RELEASE_CORRUPT", `stored release ${row.digest} lacks the blob ${f.blob} of ${JSON.stringify(f.name)}`);
    return { name: f.name, data: bytes };
  });
  const digest = digestEntries(files.map((f) => ({ name: Buffer.from(f.name, "utf8"), content: f.data })));
  if (digest !== row.digest) throw new ActivationError("RELEASE_CORRUPT", `stored release ${row.digest} reads back as a tree with digest ${digest}`);
  return { digest: row.digest, manifest: row.manifest as Manifest, files };
}
