import { MAX_CELL_SOURCE_BYTES } from "@klbr/envelope";
import { HostError } from "../errors";
import type { IncidentsStore } from "../store/api";

/**
 * Refuse a cell over the spec's 262,144-byte source limit before anything runs, the same way
 * whatever its size (over one control frame too): a durable `cell.refused` incident saying why,
 * and CELL_TOO_LARGE for the caller. Without this a cell under a frame was failed by the worker
 * (a failed execution) and one over a frame never reached the host at all.
 */
export async function refuseOversizeCell(store: IncidentsStore, cell: { sessionId: string; bytes: number }, atMs: number): Promise<never> {
  await store.recordIncident("cell.refused", { reason: "cell_too_large", session_id: cell.sessionId, bytes: cell.bytes, limit: MAX_CELL_SOURCE_BYTES }, atMs);
  throw new HostError("CELL_TOO_LARGE", `the cell is ${cell.bytes} bytes; a cell's source is at most ${MAX_CELL_SOURCE_BYTES} bytes (UTF-8), so nothing ran`);
}

/** Whether a cell's source is over the limit, and its size. */
export function oversize(code: string): number | null {
  const bytes = Buffer.byteLength(code);
  return bytes > MAX_CELL_SOURCE_BYTES ? bytes : null;
}
