import { HostError } from "../../errors";
import type { LogViewStore } from "../api/log-view";
import type { SessionViewsStore } from "../api/session-views";

const unsupported = (what: string) => async (): Promise<never> => {
  throw new HostError("DATABASE_UNSUPPORTED", `${what} reads the SQLite log only yet; on PostgreSQL it is not available (C21)`);
};

/**
 * The log's surface views (`klbr log`, the web view's pages) are SQLite-specific read paths
 * (rowid followers, prepared aggregate SQL) that are not ported yet: on PostgreSQL they refuse
 * with a coded error rather than answer from nothing.
 */
export function pgViews(): LogViewStore & SessionViewsStore {
  return {
    readLog: unsupported("klbr log"),
    followLog: unsupported("klbr log --follow"),
    listSessions: unsupported("the sessions view"),
    sessionSummary: unsupported("the session view"),
    requestPage: unsupported("the requests view"),
    cellPage: unsupported("the cells view"),
    cellView: unsupported("the cell view"),
    frontierList: unsupported("the frontiers view"),
    displayImage: unsupported("the display image view"),
    requestView: unsupported("the request view"),
  };
}
