import { assembleMessages, buildRequestBody, prefixView, serializeBody, type FrontierRef, type Route, type TranscriptRecord } from "@klbr/driver";
import type { Store } from "../store/api";
import type { ModelRequestRow } from "../store/model-requests";

/** What a rebuilt request reads of the log. */
export type ReassembleStore = Pick<Store, "headerRecord" | "getFrontier" | "loadTranscript">;

type FrontierLike = { id: string; coversThrough: number; block: string; createdAtMs: number } | undefined;

function frontierRef(f: FrontierLike): FrontierRef | null {
  return f ? { frontier_id: f.id, covers_through: f.coversThrough, block: f.block, created_at_ms: f.createdAtMs } : null;
}

function bodyOf(route: Route, header: string, frontier: FrontierRef | null, records: TranscriptRecord[]): { text: string; prefixText: string } {
  const body = buildRequestBody(route, assembleMessages({ header, frontier, records }));
  return { text: serializeBody(body), prefixText: serializeBody(prefixView(route.api, body)) };
}

/**
 * A request's body rebuilt from the log alone: the route profile on its row, the pin it ran
 * under, its frontier, and the transcript records it included. Uses the pure assembly (not the
 * session's incremental one), so a digest match checks both against each other.
 */
export async function reassembleRequest(store: ReassembleStore, row: ModelRequestRow): Promise<{ text: string; prefixText: string }> {
  const pin = (await store.headerRecord(row.headerRecordId))!.record as { text: string };
  const frontier = frontierRef(row.frontierId ? await store.getFrontier(row.frontierId) : undefined);
  const route = row.profile as Route;
  // A route that read images was sent their stored bytes (C20): the same bytes rebuild its body.
  const records = await store.loadTranscript(row.sessionId, frontier?.covers_through ?? 0, row.throughSeq, { images: route.images === true });
  return bodyOf(route, pin.text, frontier, records);
}
