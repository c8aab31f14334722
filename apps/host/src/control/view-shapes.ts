// The shapes of the log's views as the surfaces see them (C23), types only: the store defines them
// (store/view-shapes.ts) and the surfaces (web/page-data.ts, and apps/web's browser code) reach
// them through here, not into store/. No runtime code, type imports only: esbuild erases it.
export type { CellView, DisplayImage, DisplayRef, DisplayView, FrontierView, Message, Page, RequestSummary, RequestView, SessionSummary, ToolCall, UsageCost, UsageCounts, UsagePrices, UsageTotals } from "../store/view-shapes";
