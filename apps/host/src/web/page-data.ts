// What the web server puts in a page (and answers on /api/sessions[/ID]), types only: server.ts
// builds these and the browser code (apps/web/src/types.ts) reads them from this file, so the two
// cannot drift. No runtime code and type imports only, from files that are themselves types only.
import type { UsagePrices } from "@klbr/usage";
import type { CellView, FrontierView, Page, RequestSummary, SessionSummary } from "../control/view-shapes";

/** The routes' prices by route name (routes.json, C23); a route with none is absent. */
export type Prices = Record<string, UsagePrices>;

/** The sessions page: each session with the daemon's state of its workbench (null: none, or no daemon). */
export interface SessionsData {
  sessions: Array<SessionSummary & { state: string | null }>;
  /** Whether a daemon answered on the control socket. */
  daemon: boolean;
  prices: Prices;
}

/** One session's page: its summary, a page of its requests and of its cells, its frontiers. */
export interface SessionData {
  /** `running`: the execution id the daemon runs now, if any. */
  session: SessionSummary & { state: string | null; running: string | null };
  daemon: boolean;
  requests: Page<RequestSummary>;
  cells: Page<CellView>;
  frontiers: FrontierView[];
  prices: Prices;
}

/** The data inline in a page: which page, and its data. */
export type PageData = ({ page: "sessions" } & SessionsData) | ({ page: "session" } & SessionData);
