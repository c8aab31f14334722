import type { LogViewStore } from "../api/log-view";
import type { SessionViewsStore } from "../api/session-views";
import type { TranscriptStore } from "../api/transcript";
import type { PgContext } from "./context";
import { pgLogView } from "./log-view";
import { pgSessionViews } from "./session-views";

/** The log's surface views over PostgreSQL (`klbr log`, `klbr web`'s pages): the SQLite views' answers (test/store-views.test.ts). */
export function pgViews(c: PgContext, transcript: Pick<TranscriptStore, "loadTranscript">): LogViewStore & SessionViewsStore {
  return { ...pgLogView(c), ...pgSessionViews(c, transcript) };
}
