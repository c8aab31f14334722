import { cellPage, cellView, displayImage, frontierList, listSessions, requestPage, sessionSummary } from "../session-views";
import { requestView } from "../request-view";
import type { SessionViewsStore } from "../api/session-views";
import type { SqliteContext } from "./context";

/** SessionViewsStore over the prepared SQLite views. */
export function sqliteSessionViews(c: SqliteContext): SessionViewsStore {
  return {
    listSessions: async (prices) => listSessions(c.sqlite, prices),
    sessionSummary: async (sessionId, prices) => sessionSummary(c.sqlite, sessionId, prices),
    requestPage: async (sessionId, prices, opts) => requestPage(c.sqlite, sessionId, prices, opts),
    cellPage: async (sessionId, opts) => cellPage(c.sqlite, sessionId, opts),
    cellView: async (executionId) => cellView(c.sqlite, executionId),
    frontierList: async (sessionId) => frontierList(c.sqlite, sessionId),
    displayImage: async (digest) => displayImage(c.sqlite, digest),
    requestView: async (requestId) => requestView(c.sqlite, requestId),
  };
}
