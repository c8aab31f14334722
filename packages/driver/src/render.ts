import { renderObservation, type HeaderRevision } from "@klbr/header";
import { FRAME_SEPARATOR, frameInput, frameResult, stampOrUnknown } from "@klbr/transcript";
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
  if (result.error) parts.push(result.error.endsWith("\n") ? result.error : `${result.error}\n`);
  if (result.truncated_bytes > 0) parts.push(`[${result.truncated_bytes} bytes of output were cut]\n`);
  if (result.status !== "ok") parts.push(`[status: ${result.status}${result.ended_by ? ` (${result.ended_by})` : ""}]\n`);
  return parts.join("");
}

/** A call the host did not run, and why: `[stamp]` then `not run: <reason>`. */
export function renderRefusal(reason: string, atMs: number): string {
  return `${frameResult({ observed_at_ms: atMs })}\nnot run: ${reason}\n`;
}

/** The frontier block as the first message after the header: `[stamp · frontier]` then the block. */
export function renderFrontier(frontier: FrontierRef): string {
  return `[${stampOrUnknown(frontier.created_at_ms)}${FRAME_SEPARATOR}frontier]\n${frontier.block}`;
}

/** An observed header revision at the point it was noticed (rule 2). */
export function renderRevision(revision: HeaderRevision): string {
  return renderObservation(revision);
}

export { frameInput };
