/** The foreground cell a request belongs to; only it may make host effects (spec "Scope"). */
export interface LiveExecution {
  readonly id: string;
  readonly sessionId: string;
  readonly generation: string;
  /** Set when the host accepted a wait: the execution may make no further request. */
  yielded: boolean;
  /** Set when the cell completed. */
  ended: boolean;
  /** The hooks revision this cell first used; later hooks in the cell use the same one. */
  hooksPin: unknown;
}

/** A hook decision as the host saw it: the worker's validated value, or why there is none. */
export type HookOutcome =
  | { ok: true; value: Record<string, unknown>; revision: string }
  | { ok: false; reason: string; revision: string | null };
