import type { HeaderRevision } from "@klbr/header";
import type { ImageFacts, InputEvent } from "@klbr/transcript";

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
  /** The cell's rich displays in order (C20); absent or empty when it showed none. */
  displays?: ResultDisplay[];
  /** Displays the cell could not show (past 32). */
  displays_dropped?: number;
}

/** One stored display as the model reads it (C20). */
export interface ResultDisplay {
  /** text/markdown, else text/plain. */
  text: string;
  images: ResultImage[];
  /** What did not fit its frame, by MIME type (bytes). */
  omitted?: Record<string, number>;
}

/**
 * One image of a display. `base64` is the stored bytes, present only when the host assembles for
 * a route declared `"images": true` (and even then a route without it never sends them).
 */
export interface ResultImage extends ImageFacts {
  mime: "image/png" | "image/jpeg";
  base64?: string;
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
  | { seq: number; kind: "observation"; revision: HeaderRevision }
  /** A turn the host ended without the model's choice (the operator stopped it), with the wait's reason. */
  | { seq: number; kind: "turn_end"; reason: string; at_ms: number };

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
