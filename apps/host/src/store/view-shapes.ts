// The shapes of the durable log's read-only views (C23), types only: session-views.ts and
// request-view.ts build them, the web server sends them, and the browser code (apps/web) reads
// them from this very file. So it holds no runtime code and imports only types: esbuild drops it
// from the bundle, and apps/web's typecheck sees the host's own definitions, not a copy.
import type { Message, ToolCall } from "@klbr/driver";
import type { UsageCost, UsageCounts } from "@klbr/usage";
import type { DisplayRef } from "./display-ref";

export type { Message, ToolCall } from "@klbr/driver";
export type { CostTerm, UsageCost, UsageCounts, UsagePrices } from "@klbr/usage";
export type { DisplayImage, DisplayRef } from "./display-ref";

/** Token totals of a set of requests, and their cost where every route involved is priced. */
export interface UsageTotals {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_prompt_tokens: number;
  cache_write_tokens: number;
  /** Requests whose usage the route did not report (their tokens are unknown, not zero). */
  requests_without_usage: number;
  /** USD at the routes' prices; null when no request could be priced. */
  cost_usd: number | null;
  /** Per route: the cost and its formula (null cost: that route has no price, or its usage was not reported). */
  cost_by_route: Array<{ route: string; requests: number; cost: UsageCost | null }>;
}

/** One row of the sessions page. */
export interface SessionSummary extends UsageTotals {
  session_id: string;
  /** The generation of the session's newest cell or kernel reset (null before its first). */
  generation: string | null;
  /** The host holding the session's lease (C21), null when none does. */
  holder_host: string | null;
  /** Epoch ms of the newest record of the session. */
  last_activity_ms: number | null;
  cells: number;
  running_cells: number;
}

/** A model request as the session page lists it (its messages are fetched on their own). */
export interface RequestSummary {
  id: string;
  turn_id: string;
  route: string;
  model: string;
  response_model: string | null;
  status: string;
  /** How it failed (model-requests.ts writes it): null unless status is error. */
  error: { code: string; message: string; status: number | null } | null;
  retries: number;
  body_bytes: number;
  shared_prefix_bytes: number;
  header_record_id: number;
  frontier_id: string | null;
  through_seq: number;
  started_at_ms: number;
  ended_at_ms: number | null;
  usage: UsageCounts | null;
  /** cached_prompt_tokens / prompt tokens (the whole prompt, plain input and cache reads and writes), when both are known. */
  cache_share: number | null;
  cost: UsageCost | null;
  /** The reply as received: text and tool calls. */
  reply: { text: string; calls: ToolCall[]; stop: string | null } | null;
  /** The cells the reply's calls ran (execution ids), in order. */
  cells: string[];
}

/** A cell as the session page shows it. */
export interface CellView {
  id: string;
  session_id: string;
  generation: string;
  code: string;
  status: string;
  output: Array<{ stream: string; text: string }>;
  truncated_bytes: number | null;
  error: string | null;
  ended_by: string | null;
  started_at_ms: number;
  ended_at_ms: number | null;
  cpu_ms: number | null;
  peak_rss_bytes: number | null;
  /** The model request whose reply called it; null for a cell run by `klbr exec` or a surface. */
  request_id: string | null;
  /** Who ran it (C20's `origin`: exec, model, mcp, web, ...); null on rows older than the column. */
  origin: string | null;
  /** Its rich displays in order (C20 DisplayRefs: text, images by digest). */
  displays: DisplayView[];
  displays_dropped: number | null;
}

/** A stored display as the page shows it (C20). */
export type DisplayView = DisplayRef;

/** A fold's frontier (C12). */
export interface FrontierView {
  id: string;
  covers_through: number;
  reason: string;
  block: string;
  execution_id: string | null;
  created_at_ms: number;
  installed_at_ms: number | null;
}

/** One page of a list, newest page last: `page` counts from 1. */
export interface Page<T> {
  items: T[];
  page: number;
  pages: number;
  total: number;
  page_size: number;
}

/** What one request carried: its header pin, the frontier it restarted from, its messages and the header revisions it observed. */
export interface RequestView {
  id: string;
  session_id: string;
  turn_id: string;
  route: string;
  api: string;
  /** The pin the request ran under: its digest and why it was pinned (its text is the system message). */
  header: { record_id: number; digest: string; reason: string | null; pinned_at_ms: number | null };
  frontier: { id: string; covers_through: number } | null;
  /** The transcript records it included: after the frontier (or from the start) through this seq. */
  through_seq: number;
  /** In the driver's neutral form: system, user, assistant (text and tool calls), tool (results). */
  messages: Message[];
  /** The header revisions observed within the request (C5), each as its message shows it. */
  observations: Array<{ digest: string; change: unknown; sources: unknown; actor: unknown; observed_at_ms: number }>;
}
