import { FRAME_SEPARATOR } from "./frame.js";

/** What an image line is derived from: a stored display image (C20). */
export interface ImageFacts {
  /** `image/png` or `image/jpeg`. */
  mime: string;
  /** Pixels, or null when the image's header did not say. */
  width: number | null;
  height: number | null;
  /** Decoded size. */
  bytes: number;
  /** `sha256:<64 hex>` of the decoded bytes. */
  digest: string;
}

/** The hex digits of a digest an image line shows (C20: `sha256:<first 12>`). */
export const IMAGE_DIGEST_DIGITS = 12;

/** A byte count as a person reads it, rounded down: `512 B`, `23 KiB`, `1.4 MiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.floor(bytes / 1024)} KiB`;
  return `${(Math.floor((bytes / (1024 * 1024)) * 10) / 10).toFixed(1)} MiB`;
}

/** `sha256:<first 12 hex>` of a digest: what an image line shows and `klbr display get` accepts. */
export function shortDigest(digest: string): string {
  const hex = digest.startsWith("sha256:") ? digest.slice("sha256:".length) : digest;
  return `sha256:${hex.slice(0, IMAGE_DIGEST_DIGITS)}`;
}

/**
 * The line a model (and a terminal) reads for a displayed image (C20):
 * `[image/png 640x480 · 23 KiB · sha256:<first 12>]`; without its size when the header did not say.
 */
export function frameImage(image: ImageFacts): string {
  const size = image.width !== null && image.height !== null ? ` ${image.width}x${image.height}` : "";
  return `[${image.mime}${size}${FRAME_SEPARATOR}${formatBytes(image.bytes)}${FRAME_SEPARATOR}${shortDigest(image.digest)}]`;
}

/**
 * The line for what a display could not carry (C20's `klbr/omitted`, `{mime: bytes}`): a
 * representation past the 1 MiB frame, or how much of its text/plain was cut to fit.
 */
export function frameOmitted(mime: string, bytes: number): string {
  if (mime === "text/plain") return `[${formatBytes(bytes)} of text/plain cut: a display carries at most 1 MiB]`;
  return `[${mime} not shown: ${formatBytes(bytes)} is past the 1 MiB a display carries]`;
}
