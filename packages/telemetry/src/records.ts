import type { UsageRecord } from "@klbr/usage";

/** A turn began (the log's turn_start). */
export interface TurnStart {
  sessionId: string;
  turnId: string;
  atMs: number;
  /** The route that drives the session. */
  route?: { name: string; api: string; model: string };
  /** Cells of other sessions whose peer requests this turn answers (their spans are linked). */
  causedBy?: string[];
}

/** A turn ended (the durable wait it ended with, or its yielded cell). */
export interface TurnEnd {
  sessionId: string;
  reason: string;
  atMs: number;
}

/** A model request row, closed (C10): as the log recorded it. */
export interface ModelRequestRecord {
  id: string;
  sessionId: string;
  route: string;
  api: string;
  model: string;
  headerRecordId: number;
  bodyBytes: number;
  sharedPrefixBytes: number;
  status: "ok" | "error" | "running";
  error: { code: string; message: string; status?: number | null } | null;
  retries: number;
  /** The @klbr/usage record; null when the route reported none. */
  usage: UsageRecord | null;
  /** The reply as received: text, tool calls, stop reason. */
  reply: { text?: string; calls?: Array<{ id?: string | null; call_id?: string | null; name?: string; arguments?: string }>; stop?: string | null } | null;
  /** The model the reply named (gen_ai.response.model); null or absent when it named none. */
  responseModel?: string | null;
  startedAtMs: number;
  endedAtMs: number | null;
  /** The request's messages (only read when contents are captured). */
  messages?: () => unknown;
}

/** A cell began (its execution id and, when the model called the tool, the call id). */
export interface CellStart {
  sessionId: string;
  executionId: string;
  callId: string | null;
  atMs: number;
}

/** One host request of a cell, with its reply, as the host_requests log holds it. */
export interface HostRequestRecord {
  requestId: string;
  method: string;
  request: Record<string, unknown>;
  reply: Record<string, unknown> | null;
  requestedAtMs: number;
  repliedAtMs: number | null;
}

/** A closed execution row (the cell's result), with its host requests. */
export interface CellRecord {
  sessionId: string;
  executionId: string;
  code: string;
  status: string;
  output: Array<{ stream?: string; text?: string }> | null;
  truncatedBytes: number | null;
  error: string | null;
  endedBy: string | null;
  startedAtMs: number;
  endedAtMs: number | null;
  hostRequests: HostRequestRecord[];
}
