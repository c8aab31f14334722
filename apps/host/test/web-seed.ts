// A log with one session of n records of each kind, written straight into SQLite (no model, no
// worker): a model request with usage and a reply calling a cell, the cell with output, their
// transcript records, and an operator input. The web bench (10,000 against 100) and the browser
// test of a 10,000-record page share it (C23).
import { migrateHostDb, openHostDatabase } from "../src/db/open";
import { dataLayout } from "../src/paths";
import { tempDir } from "./helpers";

/** A new data directory whose log holds one session, `session`, of `n` records of each kind. */
export function seedWebSession(n: number, session: string): string {
  const dataDir = tempDir("klbr-webb-");
  const sqlite = openHostDatabase(dataLayout(dataDir).database);
  migrateHostDb(sqlite);
  const t0 = Date.UTC(2026, 11, 1);
  const header = sqlite
    .prepare("INSERT INTO header_records (session_id, type, digest, record, at_ms) VALUES (?, 'header_pin', ?, ?, ?)")
    .run(session, `${"a".repeat(64)}`, JSON.stringify({ type: "header_pin", digest: "a".repeat(64), text: "You are running inside klbr runtime.", reason: "session_start", pinned_at_ms: t0 }), t0).lastInsertRowid;
  const event = sqlite.prepare("INSERT INTO events (session_id, lane, direction, source, received_at_ms, payload) VALUES (?, 'operator', 'in', 'operator', ?, ?)");
  const transcript = sqlite.prepare("INSERT INTO transcript_records (session_id, kind, ref, request_id, call_id, detail, at_ms) VALUES (?, ?, ?, ?, ?, NULL, ?)");
  const requestRow = sqlite.prepare(
    `INSERT INTO model_requests (id, session_id, turn_id, route, api, model, profile, header_record_id, frontier_id, through_seq, body_digest, body_bytes, shared_prefix_bytes, status, error, retries, usage, reply, response_model, started_at_ms, ended_at_ms)
     VALUES (?, ?, ?, 'bench', 'chat', 'bench-1', '{}', ?, NULL, ?, ?, ?, ?, 'ok', NULL, 0, ?, ?, 'bench-1', ?, ?)`,
  );
  const execution = sqlite.prepare(
    `INSERT INTO executions (id, session_id, generation, code, status, output, truncated_bytes, error, ended_by, failure, started_at_ms, ended_at_ms, cpu_ms, peak_rss_bytes, origin)
     VALUES (?, ?, 'g-1', ?, 'ok', ?, 0, NULL, 'worker', NULL, ?, ?, 3, 20000000, 'model')`,
  );
  const output = JSON.stringify([{ stream: "stdout", text: `${"line of output ".repeat(8)}\n`.repeat(8) }]);
  sqlite.transaction(() => {
    for (let i = 0; i < n; i++) {
      const at = t0 + i * 1000;
      const input = event.run(session, at, JSON.stringify({ text: `step ${i}: carry on` })).lastInsertRowid;
      const seq = Number(transcript.run(session, "input", String(input), null, null, at).lastInsertRowid);
      const id = `mr-${String(i).padStart(6, "0")}`;
      const usage = { shape: "openai_chat", prompt_tokens: 2000 + i, completion_tokens: 40, cached_prompt_tokens: 1900 + i, total_tokens: 2040 + i, raw: [], flags: [] };
      const reply = { text: "Running the next step.", calls: [{ id: `call_${i}`, name: "python", arguments: JSON.stringify({ code: `x = ${i}\nprint(x)` }) }], stop: "tool_calls" };
      requestRow.run(id, session, `turn-${Math.floor(i / 2)}`, header, seq, "b".repeat(64), 8000 + i, 7900 + i, JSON.stringify(usage), JSON.stringify(reply), at + 1, at + 300);
      transcript.run(session, "reply", id, id, null, at + 300);
      const ex = `ex-${String(i).padStart(6, "0")}`;
      execution.run(ex, session, `x = ${i}\nprint(x)`, output, at + 301, at + 340);
      transcript.run(session, "cell", ex, id, `call_${i}`, at + 340);
    }
  })();
  sqlite.close();
  return dataDir;
}
