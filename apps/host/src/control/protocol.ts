/** A stored display (C20) as control replies, live events and log views carry it. */
export type { DisplayRef } from "../store/displays";

/** A request on the control socket: an id the reply repeats, an operation and its fields. */
export type ControlRequest =
  /** With `live` (and an execution_id), the cell's C16 output is pushed as `{event}` frames before the reply. */
  /** `origin` says who runs it (C20, the execution record's `origin`): default "exec". */
  | { id: number; op: "exec"; code: string; session?: string; execution_id?: string; live?: boolean; origin?: string }
  /** A cell the client will not send (over the source limit, perhaps over a frame): recorded and refused. */
  | { id: number; op: "refuse_cell"; bytes: number; session?: string }
  | { id: number; op: "say"; text: string; source?: string; session?: string }
  | { id: number; op: "interrupt"; execution_id?: string; session?: string }
  /** Stop the session's running model turn (klbr chat's Ctrl-C) -> `{"stopping": bool}`. */
  | { id: number; op: "stop_turn"; session?: string }
  | { id: number; op: "status" }
  /** One page of a session's durable log (control/log-page.ts): `{session, page, page_size, pages, total, records}`. */
  | { id: number; op: "log_page"; session: string; page?: number; page_size?: number }
  | { id: number; op: "subscribe" }
  /** Push live output (C16) of one execution, one session's cells, or (neither) every cell, as `{event}` frames. */
  | { id: number; op: "watch_output"; execution_id?: string; session?: string }
  /** A stored display blob (C20) by digest (`sha256:<hex>`) -> `{digest, media_type, base64}`; unknown: DISPLAY_NOT_FOUND. */
  | { id: number; op: "blob_get"; digest: string };

/** A reply, or a pushed notification for subscribers. */
export type ControlMessage =
  | { id: number; ok: true; value: unknown }
  | { id: number | null; ok: false; error: { code: string; message: string } }
  | { event: unknown };

/** The longest Unix socket path Node binds without silently truncating it. */
export const MAX_SOCKET_PATH_BYTES = 107;

/**
 * Live output queued for one control client, at most (its socket's unwritten bytes): beyond it a
 * client that does not read loses live messages, so it can never grow the host's memory, slow the
 * cell or the other clients. It is told: the execution's next event it gets (or, once it has read
 * everything, an event with empty text and that seq) counts what it lost in dropped_bytes, and
 * seq skips the lost ones. The completion record is unaffected.
 */
export const MAX_LIVE_BACKLOG_BYTES = 1 << 20;

/** Entries a log_page holds unless the request asks for another size. */
export const LOG_PAGE_DEFAULT_SIZE = 50;
/** The most entries one log_page may hold: a reply stays well under a control frame and a model's context. */
export const LOG_PAGE_MAX_SIZE = 200;
