// The shapes the host's web server sends (apps/host/src/control/log-views.ts, request-view.ts).

export interface UsageCounts {
  prompt_tokens?: number;
  completion_tokens?: number;
  cached_prompt_tokens?: number;
  cache_write_tokens?: number;
  uncached_prompt_tokens?: number;
  reasoning_tokens?: number;
  total_tokens?: number;
}

export interface UsageCost {
  usd: number;
  terms: Array<{ kind: string; tokens: number; usd_per_mtok: number; usd: number }>;
  formula: string;
}

export interface Totals {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_prompt_tokens: number;
  cache_write_tokens: number;
  requests_without_usage: number;
  cost_usd: number | null;
  cost_by_route: Array<{ route: string; requests: number; cost: UsageCost | null }>;
}

export interface SessionSummary extends Totals {
  session_id: string;
  state: string | null;
  generation: string | null;
  holder_host: string | null;
  last_activity_ms: number | null;
  cells: number;
  running_cells: number;
}

export interface Page<T> {
  items: T[];
  page: number;
  pages: number;
  total: number;
  page_size: number;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface RequestSummary {
  id: string;
  turn_id: string;
  route: string;
  model: string;
  response_model: string | null;
  status: string;
  error: { code: string; message: string } | null;
  retries: number;
  body_bytes: number;
  shared_prefix_bytes: number;
  header_record_id: number;
  frontier_id: string | null;
  through_seq: number;
  started_at_ms: number;
  ended_at_ms: number | null;
  usage: UsageCounts | null;
  cache_share: number | null;
  cost: UsageCost | null;
  reply: { text: string; calls: ToolCall[]; stop: string | null } | null;
  cells: string[];
}

export interface Cell {
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
  request_id: string | null;
  origin: string | null;
  displays: DisplayRef[];
  displays_dropped: number | null;
}

/** A stored display (C20): what the model reads as text, images by digest. */
export interface DisplayRef {
  seq: number;
  digest: string;
  mimes: string[];
  text: string;
  images: Array<{ mime: string; digest: string; width: number | null; height: number | null; bytes: number }>;
  omitted?: Record<string, number>;
}

export interface Frontier {
  id: string;
  covers_through: number;
  reason: string;
  block: string;
  execution_id: string | null;
  created_at_ms: number;
  installed_at_ms: number | null;
}

export type Message =
  | { role: "system"; text: string }
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; calls: ToolCall[] }
  | { role: "tool"; call_id: string; text: string };

export interface RequestView {
  id: string;
  route: string;
  api: string;
  header: { record_id: number; digest: string; reason: string | null; pinned_at_ms: number | null };
  frontier: { id: string; covers_through: number } | null;
  through_seq: number;
  messages: Message[];
  observations: Array<{ digest: string; change: unknown; sources: unknown; actor: unknown; observed_at_ms: number }>;
}

export type Prices = Record<string, { input?: number; output?: number; cache_read?: number; cache_write?: number }>;

export interface SessionsData {
  page: "sessions";
  sessions: SessionSummary[];
  daemon: boolean;
  prices: Prices;
}

export interface SessionData {
  page: "session";
  session: SessionSummary & { running: string | null };
  daemon: boolean;
  requests: Page<RequestSummary>;
  cells: Page<Cell>;
  frontiers: Frontier[];
  prices: Prices;
}
