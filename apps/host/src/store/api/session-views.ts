import type { CellView, FrontierView, Page, PriceBook, RequestSummary, SessionSummary } from "../session-views";
import type { RequestView } from "../request-view";

/** The log's read-only views for the surfaces (C23): sessions, one session's requests, cells and frontiers, a page at a time. */
export interface SessionViewsStore {
  /** Every session the log knows, newest activity first, with its totals. */
  listSessions(prices: PriceBook): Promise<SessionSummary[]>;
  /** One session's summary (as a row of the sessions page), or null when the log has nothing of it. */
  sessionSummary(sessionId: string, prices: PriceBook): Promise<SessionSummary | null>;
  /** A page of a session's model requests in the order they were made (default: the newest page). */
  requestPage(sessionId: string, prices: PriceBook, opts?: { page?: number; pageSize?: number }): Promise<Page<RequestSummary>>;
  /** A page of a session's cells in the order they started (default: the newest page). */
  cellPage(sessionId: string, opts?: { page?: number; pageSize?: number }): Promise<Page<CellView>>;
  /** One cell by execution id, or null. */
  cellView(executionId: string): Promise<CellView | null>;
  /** A session's frontiers (its folds), oldest first. */
  frontierList(sessionId: string): Promise<FrontierView[]>;
  /** A display's image (C20) by its full digest, or null (never a bundle: a browser must not render its html). */
  displayImage(digest: string): Promise<{ media_type: string; data: Buffer } | null>;
  /** A model request's messages as the model read them, rebuilt from the log alone; null when there is no such request. */
  requestView(requestId: string): Promise<RequestView | null>;
}
