// What the suite checks of a session a real model drove: the runtime's behaviour, never the
// model's cleverness (issue 27). Every request row ended ok; what the server was sent is what the
// row's digest says and what the log re-assembles to; between two requests with no fold the
// earlier request's messages are a byte prefix of the later one's; usage is what the server
// reported (absent stays absent), the response model the one the reply named; every cell the model wrote ran, or was refused with a reason the
// model then read; the turn ended by one of C10's three ends within max_cells_per_turn.
import { createHash } from "node:crypto";
import { bodyMessages, cellsOf, serializeMessages, type CellsMode, type ModelReply } from "@klbr/driver";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { expect } from "vitest";
import * as schema from "../../src/db/schema";
import { reassembleRequest } from "../../src/runtime/reassemble";
import { sqliteStore } from "../../src/store/sqlite";
import { sessionModelRequests } from "../../src/store/model-requests";
import { reportedModel, reportedUsage, type Exchange } from "./recording-proxy";

export const sha = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** The suite's daemons run with `--max-cells-per-turn 8` (C10's default is 50): a small model may repeat a failing cell to the limit. */
export const MAX_CELLS_PER_TURN = 8;

/** The three ends of a turn (C10): a yielded cell's wait, a reply without a cell, max_cells_per_turn. */
export const TURN_ENDS = ["model_ended_turn", "max_cells_per_turn"] as const;

/** What a session check found, for the suite's other assertions and its report. */
export interface SessionSummary {
  requests: number;
  cells: number;
  refusals: string[];
  usageReported: number;
  folds: number;
}

/** The text of every message of a request body, as the model read it. */
function messageText(body: string): string {
  return (bodyMessages(JSON.parse(body) as Record<string, unknown>) as Array<{ content?: unknown }>)
    .map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? "")))
    .join("\n");
}

const messagesOf = (body: string) => serializeMessages(bodyMessages(JSON.parse(body) as Record<string, unknown>));

/** Check a session's requests against the exchanges the proxy recorded for them, in order. */
export async function checkSession(database: string, exchanges: Exchange[], mode: CellsMode, session = "root"): Promise<SessionSummary> {
  const sqlite = new Database(database, { readonly: true, fileMustExist: true });
  try {
    const db = drizzle(sqlite, { schema });
    const rows = sessionModelRequests(db, session);
    expect(rows.length, "one request row per request the server got").toBe(exchanges.length);
    expect(rows.length).toBeGreaterThan(0);
    const summary: SessionSummary = { requests: rows.length, cells: 0, refusals: [], usageReported: 0, folds: 0 };
    // Re-assembled from the log alone, through the Store as the host's own reads go.
    const rebuilt = await Promise.all(rows.map((row) => reassembleRequest(sqliteStore(db, sqlite), row)));
    rows.forEach((row, i) => {
      const ex = exchanges[i]!;
      expect(row.status, `request ${i} ended ${JSON.stringify(row.error)}`).toBe("ok");
      expect(ex.status).toBe(200);
      expect(sha(ex.sent), `request ${i}: the body sent is the one the row's digest names`).toBe(row.bodyDigest);
      expect(sha(rebuilt[i]!.text), `request ${i} re-assembles from the log`).toBe(row.bodyDigest);
      if (i > 0 && row.frontierId === rows[i - 1]!.frontierId) {
        expect(messagesOf(ex.sent).startsWith(messagesOf(exchanges[i - 1]!.sent)), `request ${i} extends request ${i - 1}`).toBe(true);
      } else if (i > 0) summary.folds += 1;
      // Usage as the server reported it: absent stays absent.
      const reported = reportedUsage(ex.reply);
      if (reported === null) expect(row.usage, `request ${i}: the server reported no usage`).toBeNull();
      else {
        summary.usageReported += 1;
        expect(row.usage).toMatchObject({ prompt_tokens: reported.prompt_tokens, completion_tokens: reported.completion_tokens });
      }
      // The model the reply named is the row's response model (C18), null when it named none.
      expect(row.responseModel, `request ${i}: the model the reply named`).toBe(reportedModel(ex.reply));
      // Every cell of the reply ran, or was refused with a reason the model read next.
      const reply = row.reply as ModelReply;
      for (const call of cellsOf(reply, mode)) {
        const record = sqlite
          .prepare("SELECT kind, ref, detail FROM transcript_records WHERE session_id = ? AND request_id = ? AND call_id IS ? AND kind IN ('cell', 'refusal')")
          .get(session, row.id, call.call_id) as { kind: string; ref: string; detail: string | null } | undefined;
        expect(record, `request ${i}: call ${call.call_id} was answered`).toBeDefined();
        if (record!.kind === "cell") {
          const execution = sqlite.prepare("SELECT status, ended_at_ms FROM executions WHERE id = ?").get(record!.ref) as { status: string; ended_at_ms: number | null };
          expect(execution.status).not.toBe("running");
          expect(execution.ended_at_ms).not.toBeNull();
          summary.cells += 1;
        } else {
          const reason = (JSON.parse(record!.detail!) as { reason: string }).reason;
          summary.refusals.push(reason);
          const next = exchanges[i + 1];
          if (next) expect(messageText(next.sent), `request ${i + 1} tells the model why call ${call.call_id} was refused`).toContain(`not run: ${reason}`);
        }
      }
    });
    return summary;
  } finally {
    sqlite.close();
  }
}

/** How the turns of a session ended, oldest first, and how many cells each ran. */
export function turnEnds(database: string, session = "root"): Array<{ reason: string; yielded: boolean }> {
  const sqlite = new Database(database, { readonly: true, fileMustExist: true });
  try {
    const waits = sqlite.prepare("SELECT reason, execution_id FROM waits WHERE session_id = ? ORDER BY created_at_ms").all(session) as Array<{ reason: string; execution_id: string }>;
    return waits.map((w) => ({ reason: w.reason, yielded: (sqlite.prepare("SELECT count(*) AS n FROM executions WHERE id = ?").get(w.execution_id) as { n: number }).n > 0 }));
  } finally {
    sqlite.close();
  }
}

/** The most cells one turn ran: cells between two turn_start points, counted from the requests' turn ids. */
export function maxCellsInATurn(database: string, session = "root"): number {
  const sqlite = new Database(database, { readonly: true, fileMustExist: true });
  try {
    const rows = sqlite
      .prepare(
        "SELECT m.turn_id AS turn, count(t.seq) AS cells FROM model_requests m LEFT JOIN transcript_records t ON t.request_id = m.id AND t.kind = 'cell' WHERE m.session_id = ? GROUP BY m.turn_id",
      )
      .all(session) as Array<{ turn: string; cells: number }>;
    return Math.max(0, ...rows.map((r) => r.cells));
  } finally {
    sqlite.close();
  }
}
