// One page of a session's durable log, for surfaces that read it over the control socket
// (`klbr mcp`'s session_log) instead of opening the database themselves as `klbr log` does.
import type { LogViewStore } from "../store/api";
import { sessionFilter } from "../store/log-session";
import type { LogEntry } from "../store/log-view";

/** A page of one session's log, oldest first: page 1 holds its first entries, `pages` says how many there are. */
export interface LogPage {
  session: string;
  page: number;
  page_size: number;
  pages: number;
  total: number;
  records: LogEntry[];
}

/** Read page `page` (1-based) of a session's entries, `pageSize` a page; a page past the end is empty. */
export async function logPage(store: Pick<LogViewStore, "readLog">, session: string, page: number, pageSize: number): Promise<LogPage> {
  const records = sessionFilter(session)(await store.readLog());
  const start = (page - 1) * pageSize;
  return {
    session,
    page,
    page_size: pageSize,
    pages: Math.ceil(records.length / pageSize),
    total: records.length,
    records: records.slice(start, start + pageSize),
  };
}
