// A model request as the model read it (C23): the messages rebuilt from the log alone, the same
// pure assembly runtime/reassemble.ts checks digests with, so what the page shows is what was sent.
import { assembleMessages, type FrontierRef, type TranscriptRecord } from "@klbr/driver";
import type { HeaderRevision } from "@klbr/header";
import type Database from "better-sqlite3";
import { loadTranscript } from "./transcript";
import type { RequestView } from "./view-shapes";

export type { RequestView } from "./view-shapes";

/** The request's messages as the model read them, or null when there is no such request. */
export function requestView(sqlite: Database.Database, requestId: string): RequestView | null {
  const row = sqlite.prepare("SELECT * FROM model_requests WHERE id = ?").get(requestId) as Record<string, unknown> | undefined;
  if (!row) return null;
  const pinRow = sqlite.prepare("SELECT digest, record FROM header_records WHERE id = ?").get(row.header_record_id) as { digest: string; record: string } | undefined;
  const f = row.frontier_id
    ? (sqlite.prepare("SELECT id, covers_through, block, created_at_ms FROM frontiers WHERE id = ?").get(row.frontier_id) as
        | { id: string; covers_through: number; block: string; created_at_ms: number }
        | undefined)
    : undefined;
  return requestViewOf(requestId, row, pinRow, f, loadTranscript(sqlite, row.session_id as string, f?.covers_through ?? 0, row.through_seq as number));
}

type Frontier = { id: string; covers_through: number; block: string; created_at_ms: number };

/**
 * The view from its rows (either database): the request row, its pin's header record (the record
 * as JSON text), its frontier, and the transcript records after the frontier (or the start) through the request's seq.
 */
export function requestViewOf(
  requestId: string,
  row: Record<string, unknown>,
  pinRow: { digest: string; record: string } | undefined,
  f: Frontier | undefined,
  records: TranscriptRecord[],
): RequestView {
  const pin = pinRow ? (JSON.parse(pinRow.record) as { text?: string; reason?: string; pinned_at_ms?: number }) : {};
  const frontier: FrontierRef | null = f ? { frontier_id: f.id, covers_through: f.covers_through, block: f.block, created_at_ms: f.created_at_ms } : null;
  const sessionId = row.session_id as string;
  const observations = records
    .filter((r): r is Extract<typeof r, { kind: "observation" }> => r.kind === "observation")
    .map((r) => {
      const rev = r.revision as HeaderRevision;
      return { digest: rev.digest, change: rev.change, sources: rev.sources, actor: rev.actor, observed_at_ms: rev.observed_at_ms };
    });
  return {
    id: requestId,
    session_id: sessionId,
    turn_id: row.turn_id as string,
    route: row.route as string,
    api: row.api as string,
    header: { record_id: row.header_record_id as number, digest: pinRow?.digest ?? "", reason: pin.reason ?? null, pinned_at_ms: pin.pinned_at_ms ?? null },
    frontier: f ? { id: f.id, covers_through: f.covers_through } : null,
    through_seq: row.through_seq as number,
    messages: assembleMessages({ header: pin.text ?? "", frontier, records }),
    observations,
  };
}
