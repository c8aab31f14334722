/** A request on the control socket: an id the reply repeats, an operation and its fields. */
export type ControlRequest =
  | { id: number; op: "exec"; code: string; session?: string; execution_id?: string }
  /** A cell the client will not send (over the source limit, perhaps over a frame): recorded and refused. */
  | { id: number; op: "refuse_cell"; bytes: number; session?: string }
  | { id: number; op: "say"; text: string; source?: string; session?: string }
  | { id: number; op: "interrupt"; execution_id?: string; session?: string }
  /** Stop the session's running model turn (klbr chat's Ctrl-C) -> `{"stopping": bool}`. */
  | { id: number; op: "stop_turn"; session?: string }
  | { id: number; op: "status" }
  | { id: number; op: "subscribe" };

/** A reply, or a pushed notification for subscribers. */
export type ControlMessage =
  | { id: number; ok: true; value: unknown }
  | { id: number | null; ok: false; error: { code: string; message: string } }
  | { event: unknown };

/** The longest Unix socket path Node binds without silently truncating it. */
export const MAX_SOCKET_PATH_BYTES = 107;
