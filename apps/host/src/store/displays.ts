// C20 displays as the durable log keeps them: each bundle once by digest (its JSON, images by
// reference), each image's decoded bytes once by digest, and the execution row's ordered list of
// DisplayRefs. A display is stored whole or not at all: its blobs and the row's new list are
// written in one transaction.
import { eq } from "drizzle-orm";
import type { HostDb } from "../db/open";
import { executions } from "../db/schema";
import { imageSize } from "../runtime/image-size";
import { blobDigest, putBlob, type NewBlob } from "./blobs";
import type { DisplayImage, DisplayRef, ImageMime } from "./display-ref";
import { placeholder, preparedPerConnection } from "./prepared";

export type { DisplayImage, DisplayRef, ImageMime } from "./display-ref";

/** The media type of a stored bundle (what `blob_get` of a DisplayRef's digest returns). */
export const BUNDLE_MEDIA_TYPE = "application/vnd.klbr.display+json";

/** The binary MIME types C20 sends as base64 and the host stores as bytes. */
export const IMAGE_MIMES = ["image/png", "image/jpeg"] as const satisfies readonly ImageMime[];

/** A display as the supervisor hands it over (CellDisplay without its ids). */
export interface DisplayBundle {
  data: Record<string, string>;
  metadata: Record<string, Record<string, unknown>>;
}

/** A display ready to store: its ref and the blobs it names (the bundle first). */
export interface PreparedDisplay {
  ref: DisplayRef;
  blobs: NewBlob[];
}

/** JSON with object keys sorted at every depth: the same bundle is always the same bytes, so one digest. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
    return sorted;
  });
}

function isImage(mime: string): mime is ImageMime {
  return (IMAGE_MIMES as readonly string[]).includes(mime);
}

/**
 * Hash and describe one display (pure): each image decoded (the envelope checked its base64 and
 * signature), the bundle document `{data, images, metadata}` with each image by digest in
 * `images` instead of its base64 in `data`.
 */
export function prepareDisplay(bundle: DisplayBundle, seq: number): PreparedDisplay {
  const data: Record<string, string> = {};
  const imageRefs: Record<string, string> = {};
  const images: DisplayImage[] = [];
  const imageBlobs: NewBlob[] = [];
  for (const [mime, value] of Object.entries(bundle.data)) {
    if (!isImage(mime)) {
      data[mime] = value;
      continue;
    }
    const bytes = Buffer.from(value, "base64");
    const digest = blobDigest(bytes);
    imageRefs[mime] = digest;
    images.push({ mime, digest, ...imageSize(mime, bytes), bytes: bytes.length });
    imageBlobs.push({ digest, mediaType: mime, data: bytes });
  }
  const doc = Buffer.from(canonicalJson({ data, images: imageRefs, metadata: bundle.metadata }));
  const digest = blobDigest(doc);
  const omitted = bundle.metadata["klbr/omitted"] as Record<string, number> | undefined;
  const ref: DisplayRef = {
    seq,
    digest,
    mimes: Object.keys(bundle.data),
    text: data["text/markdown"] ?? data["text/plain"] ?? "",
    ...(data["text/markdown"] !== undefined && data["text/plain"] !== undefined ? { plain: data["text/plain"] } : {}),
    images,
    ...(omitted !== undefined ? { omitted } : {}),
  };
  return { ref, blobs: [{ digest, mediaType: BUNDLE_MEDIA_TYPE, data: doc }, ...imageBlobs] };
}

const statements = preparedPerConnection((db: HostDb) => ({
  setDisplays: db
    .update(executions)
    .set({ displays: placeholder("displays") })
    .where(eq(executions.id, placeholder("id")))
    .prepare(),
}));

/**
 * Store one display of a running execution: its blobs (those already stored are not written
 * again) and the execution's list with it appended (`listed`, already including it), in one
 * transaction, so a display is never half there.
 */
export function storeDisplay(db: HostDb, executionId: string, display: PreparedDisplay, listed: DisplayRef[], atMs: number): void {
  // The statements are the connection's own (prepared once): the transaction is the connection's too.
  db.transaction(() => {
    for (const blob of display.blobs) putBlob(db, blob, atMs);
    statements(db).setDisplays.run({ id: executionId, displays: listed });
  });
}

/** A display's text/plain (what a terminal prints). */
export function plainText(ref: DisplayRef): string {
  return ref.plain ?? ref.text;
}

/** The DisplayRefs an execution row lists (none for rows older than C20 or cells that showed nothing). */
export function displaysOf(row: { displays: unknown }): DisplayRef[] {
  return Array.isArray(row.displays) ? (row.displays as DisplayRef[]) : [];
}
