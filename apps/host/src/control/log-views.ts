// The log's read-only views as the surfaces use them (C23); the queries live in store/ and are
// read through the Store's SessionViewsStore family.
import type { SessionViewsStore } from "../store/api";
import { readOnlySqliteStore } from "../store/sqlite/read-only";

export type { PriceBook } from "../store/session-views";
export type { CellView, DisplayView, FrontierView, Page, RequestSummary, RequestView, SessionSummary, UsageTotals } from "./view-shapes";

/** The views over a log another process writes, opened read-only; `close` releases the connection. */
export interface LogViews extends SessionViewsStore {
  close(): Promise<void>;
}

/** Open the views of the SQLite log at `file` (read-only: no migrations, WAL reads beside the daemon). */
export function openLogViews(file: string): LogViews {
  return readOnlySqliteStore(file);
}
