import { transcribeNew } from "../transcribe";
import type { TranscribeStore } from "../api/transcribe";
import type { SqliteContext } from "./context";
import { appendStatement } from "./transcript";

/** TranscribeStore over the synchronous SQLite functions. */
export function sqliteTranscribe(c: SqliteContext): TranscribeStore {
  const append = appendStatement(c.sqlite);
  return {
    transcribeNew: (sessionId, pinId, now) => c.write(sessionId, () => transcribeNew(c.sqlite, sessionId, pinId, now, (record) => append({ sessionId, ...record }))),
  };
}
