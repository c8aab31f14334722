// A stored display's reference (C20), types only: what the control API, `klbr log --json` and the
// web page (apps/web imports this file, so it must stay free of runtime code and of imports).

/** The binary MIME types C20 sends as base64 and the host stores as bytes (displays.ts lists them). */
export type ImageMime = "image/png" | "image/jpeg";

/** One image of a display, stored as its decoded bytes. */
export interface DisplayImage {
  mime: ImageMime;
  /** `sha256:<hex>` of the decoded bytes: a blob. */
  digest: string;
  width: number | null;
  height: number | null;
  /** Decoded size. */
  bytes: number;
}

/** A stored display: what the exec reply, the live event and `klbr log --json` show (CONTRACTS "Display on the control API"). */
export interface DisplayRef {
  /** 0, 1, 2, ... within the execution (its own displays and its remote cells', as the host listed them). */
  seq: number;
  /** `sha256:<hex>` of the stored bundle. */
  digest: string;
  /** The bundle's MIME types, as the worker sent them. */
  mimes: string[];
  /** What the model reads: text/markdown, else text/plain. */
  text: string;
  /** text/plain, when `text` is the markdown (what a terminal prints: `klbr exec`, `klbr log`). */
  plain?: string;
  images: DisplayImage[];
  /** `metadata["klbr/omitted"]`: what did not fit the 1 MiB frame, by MIME type (bytes). */
  omitted?: Record<string, number>;
}
