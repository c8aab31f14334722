import { renderObservation, type HeaderRevision } from "@klbr/header";
import { FRAME_SEPARATOR, frameImage, frameInput, frameOmitted, frameResult, stampOrUnknown } from "@klbr/transcript";
import type { ImagePart } from "./messages.js";
import type { CellResult, FrontierRef } from "./records.js";

/**
 * A cell's result as the model reads it: `[stamp · ran 420ms]`, the output records in order, the
 * error, how many bytes were cut, and a status line when the cell did not end `ok`. Derived from
 * the durable row on every assembly, so a replay reads the same bytes.
 */
export function renderCellResult(result: CellResult): string {
  const end = result.ended_at_ms;
  const duration = end === null ? null : Math.max(0, end - result.started_at_ms);
  const parts = [`${frameResult({ observed_at_ms: end, duration_ms: duration })}\n`];
  if (result.namespace_lost) {
    parts.push(`[namespace lost (${result.namespace_lost}): this cell ran in a new worker; names defined by earlier cells are gone]\n`);
  }
  for (const record of result.output) {
    parts.push(record.stream === "result" && !record.text.endsWith("\n") ? `${record.text}\n` : record.text);
  }
  for (const display of result.displays ?? []) {
    if (display.text !== "") parts.push(display.text.endsWith("\n") ? display.text : `${display.text}\n`);
    for (const image of display.images) parts.push(`${frameImage(image)}\n`);
    for (const [mime, bytes] of Object.entries(display.omitted ?? {})) parts.push(`${frameOmitted(mime, bytes)}\n`);
  }
  const dropped = result.displays_dropped ?? 0;
  if (dropped > 0) parts.push(`[${dropped} more display${dropped === 1 ? " was" : "s were"} not shown: a cell shows at most 32]\n`);
  if (result.error) parts.push(result.error.endsWith("\n") ? result.error : `${result.error}\n`);
  if (result.truncated_bytes > 0) parts.push(`[${result.truncated_bytes} bytes of output were cut]\n`);
  if (result.status !== "ok") parts.push(`[status: ${result.status}${result.ended_by ? ` (${result.ended_by})` : ""}]\n`);
  return parts.join("");
}

/**
 * The images of a cell's displays in order, as their stored bytes (C20): only those the host
 * loaded, which it does for a route declared `"images": true` alone.
 */
export function cellImages(result: CellResult): ImagePart[] {
  const images: ImagePart[] = [];
  for (const display of result.displays ?? []) for (const image of display.images) if (image.base64 !== undefined) images.push({ mime: image.mime, base64: image.base64 });
  return images;
}

/** A call the host did not run, and why: `[stamp]` then `not run: <reason>`. */
export function renderRefusal(reason: string, atMs: number): string {
  return `${frameResult({ observed_at_ms: atMs })}\nnot run: ${reason}\n`;
}

/** The frontier block as the first message after the header: `[stamp · frontier]` then the block. */
export function renderFrontier(frontier: FrontierRef): string {
  return `[${stampOrUnknown(frontier.created_at_ms)}${FRAME_SEPARATOR}frontier]\n${frontier.block}`;
}

/** What the model is told about a turn ended for it, by the wait's reason. */
const TURN_END_WORDS: Record<string, string> = {
  operator_interrupted: "the operator stopped this turn (a reply being written was discarded; a running cell was interrupted)",
};

/**
 * A turn the host ended without the model's choice: `[stamp · turn ended: <reason>]` and what it
 * means, so the next request reads why its last reply or cell has no continuation.
 */
export function renderTurnEnd(reason: string, atMs: number): string {
  return `[${stampOrUnknown(atMs)}${FRAME_SEPARATOR}turn ended: ${reason}]\n${TURN_END_WORDS[reason] ?? "the host ended this turn"}\n`;
}

/** An observed header revision at the point it was noticed (rule 2). */
export function renderRevision(revision: HeaderRevision): string {
  return renderObservation(revision);
}

export { frameInput };
