// The shapes the host's web server sends: the host's own definitions, types only (import type is
// erased by esbuild, so nothing of the host reaches the bundle). One place to reach across apps.
export type { CellView as Cell, DisplayRef, FrontierView as Frontier, Message, Page, RequestSummary, RequestView, SessionSummary, ToolCall, UsageCost, UsageCounts } from "../../host/src/control/view-shapes";
export type { PageData, Prices, SessionData, SessionsData } from "../../host/src/web/page-data";
