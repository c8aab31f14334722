import type { HeaderRevision } from "@klbr/header";
import type { InputEvent } from "@klbr/transcript";

/** One tool call of a reply, as the route sent it (arguments are the raw JSON text). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A model reply, stored exactly as received: its text and its tool calls, in order. */
export interface ModelReply {
  text: string;
  calls: ToolCall[];
  /** The route's stop / finish reason, when it gave one. */
  stop: string | null;
}

/** A cell's durable result (the execution row), from which its result frame is derived. */
export interface CellResult {
  execution_id: string;
  status: "ok" | "error" | "yielded" | "interrupted" | "failed";
  output: Array<{ stream: string; text: string }>;
  truncated_bytes: number;
  error: string | null;
  ended_by: string | null;
  started_at_ms: number;
  ended_at_ms: number | null;
  /**
   * Set when this cell ran in a new generation because the one the model's previous cell ran in
   * was ended by the host (`idle_culled`, a resource limit): its names are gone (C17, C19).
   */
  namespace_lost?: string;
}

/**
 * One record of a session's transcript, resolved from the durable log, in sequence order.
 * A `cell` or `refusal` answers one call of the reply `request_id` (`call_id` null in fence mode).
 */
export type TranscriptRecord =
  | { seq: number; kind: "input"; event: InputEvent }
  | { seq: number; kind: "reply"; request_id: string; reply: ModelReply }
  | { seq: number; kind: "cell"; request_id: string; call_id: string | null; result: CellResult }
  | { seq: number; kind: "refusal"; request_id: string; call_id: string | null; reason: string; at_ms: number }
  | { seq: number; kind: "observation"; revision: HeaderRevision };

/** The installed frontier a request restarts from (C12). */
export interface FrontierRef {
  frontier_id: string;
  covers_through: number;
  block: string;
  created_at_ms: number;
}

/** Everything a request is a pure function of: the pinned header, the frontier, the records after it. */
export interface AssemblyInput {
  header: string;
  frontier: FrontierRef | null;
  /** The records after the frontier (or all of them), in sequence order. */
  records: TranscriptRecord[];
}
