import { assembleMessages, buildRequestBody, prefixView, serializeBody, type FrontierRef, type Route } from "@klbr/driver";
import type Database from "better-sqlite3";
import type { HostDb } from "../db/open";
import { getFrontier } from "../store/frontiers";
import { headerRecord } from "../store/headers";
import type { ModelRequestRow } from "../store/model-requests";
import { loadTranscript } from "../store/transcript";

/**
 * A request's body rebuilt from the log alone: the route profile on its row, the pin it ran
 * under, its frontier, and the transcript records it included. Uses the pure assembly (not the
 * session's incremental one), so a digest match checks both against each other.
 */
export function reassembleRequest(db: HostDb, sqlite: Database.Database, row: ModelRequestRow): { text: string; prefixText: string } {
  const pin = headerRecord(db, row.headerRecordId)!.record as { text: string };
  const f = row.frontierId ? getFrontier(db, row.frontierId) : undefined;
  const frontier: FrontierRef | null = f ? { frontier_id: f.id, covers_through: f.coversThrough, block: f.block, created_at_ms: f.createdAtMs } : null;
  const route = row.profile as Route;
  // A route that read images was sent their stored bytes (C20): the same bytes rebuild its body.
  const records = loadTranscript(sqlite, row.sessionId, frontier?.covers_through ?? 0, row.throughSeq, { images: route.images === true });
  const body = buildRequestBody(route, assembleMessages({ header: pin.text, frontier, records }));
  return { text: serializeBody(body), prefixText: serializeBody(prefixView(route.api, body)) };
}
