// A cell's MCP result: the framed text a model reads (the same bytes a model turn's tool result
// carries, @klbr/driver's rendering), then each display (C20) as image content, or as text when it
// has no image. A cell that did not end ok or yielded is `isError: true`.
import { renderCellResult, type CellResult } from "@klbr/driver";
import { frameOmitted } from "@klbr/transcript";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { DisplayRef } from "../control/protocol";

/** The exec reply of the control API, as much as this surface reads of it. */
export interface ExecReply {
  id: string;
  session_id: string;
  status: CellResult["status"];
  output: Array<{ stream: string; text: string }>;
  truncated_bytes: number;
  error: string | null;
  ended_by: string | null;
  started_at_ms: number;
  ended_at_ms: number | null;
  displays?: DisplayRef[];
  displays_dropped?: number;
}

/** An image's bytes, base64, fetched from the daemon by digest (control `blob_get`). */
export type FetchBlob = (digest: string) => Promise<{ media_type: string; base64: string }>;

/** Statuses a model should read as "that did not work". */
const FAILED = new Set(["error", "interrupted", "failed"]);

/** The text a model reads of a cell, as a model turn's tool result renders it. */
export function cellText(reply: ExecReply): string {
  return renderCellResult({
    execution_id: reply.id,
    status: reply.status,
    output: reply.output,
    truncated_bytes: reply.truncated_bytes,
    error: reply.error,
    ended_by: reply.ended_by,
    started_at_ms: reply.started_at_ms,
    ended_at_ms: reply.ended_at_ms,
  });
}

/** The call's result: the cell's text, its displays, notes, and what names the execution in `_meta`. */
export async function cellResult(reply: ExecReply, fetchBlob: FetchBlob, notes: string[] = []): Promise<CallToolResult> {
  const content: CallToolResult["content"] = [{ type: "text", text: cellText(reply) }];
  for (const display of reply.displays ?? []) {
    // What did not fit the display's frame (klbr/omitted) is said, as the model's result frame says it.
    const omitted = Object.entries(display.omitted ?? {}).map(([mime, bytes]) => frameOmitted(mime, bytes));
    if (display.images.length === 0) {
      content.push({ type: "text", text: [display.text, ...omitted].join("\n") });
      continue;
    }
    if (omitted.length > 0) content.push({ type: "text", text: omitted.join("\n") });
    for (const image of display.images) {
      try {
        const blob = await fetchBlob(image.digest);
        content.push({ type: "image", data: blob.base64, mimeType: blob.media_type });
      } catch (error) {
        // The cell ran and its record stands: a display that cannot be read is said, not fatal.
        content.push({ type: "text", text: `[display ${display.seq}: image ${image.digest} could not be read: ${(error as Error).message}]\n${display.text}` });
      }
    }
  }
  if ((reply.displays_dropped ?? 0) > 0) notes.push(`[${reply.displays_dropped} displays were dropped (over the per-cell limit)]`);
  for (const note of notes) content.push({ type: "text", text: note });
  return {
    content,
    isError: FAILED.has(reply.status),
    _meta: { "klbr/execution": { execution_id: reply.id, session_id: reply.session_id, status: reply.status, ended_by: reply.ended_by } },
  };
}

/** A call whose cell has no record to show (the daemon went away mid-cell): an error result saying so. */
export function failureResult(code: string, message: string): CallToolResult {
  return { content: [{ type: "text", text: `${code}: ${message}` }], isError: true };
}
