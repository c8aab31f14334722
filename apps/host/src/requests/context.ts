import type { SessionActor } from "@klbr/header";
import type { Store } from "../store/api";
import type { HeaderPlan } from "../store/api/headers";
import type { HookOutcome, LiveExecution } from "../runtime/live-execution";
import type { PeerSignals } from "../runtime/peer-signals";
import type { RemoteService } from "../runtime/remote-service";
import type { EventRow } from "../store/events";
import type { WaitRow } from "../store/waits";
import type { SandboxView } from "../sandbox/settings";
import type { LimitsMechanism } from "@klbr/supervisor";

export type { HookOutcome, LiveExecution };

/** Decision slots and the active behaviour revision (runtime/hooks-service.ts). */
export interface HookAccess {
  invoke(live: LiveExecution | null, slot: "attention.plan" | "delivery.review", input: unknown): Promise<HookOutcome>;
  info(): { revision: string; epoch: number; path: string; hooks: Record<string, string> } | null;
  /** behavior.activate: candidate handshake, then the epoch compare-and-swap. */
  activate(path: string, expectedEpoch: number): Promise<unknown>;
}

/** The skill set the session's current generation loaded (C4: a skill written mid-turn is the next generation's). */
export interface SkillAccess {
  index(sessionId: string): unknown;
  load(sessionId: string, id: string): unknown;
}

/** A session's instruction header (runtime/instructions.ts). */
export interface InstructionAccess {
  current(sessionId: string): Promise<unknown>;
  /**
   * An observation of a session's instruction sources (a change is a header revision attributed to
   * `actor`) as a plan for the store transaction that runs it; its result is the session's header
   * digest after it, or null when it has no header yet (orientation.adopt's one transaction).
   */
  observation(sessionId: string, actor: SessionActor): { plan: HeaderPlan<string | null>; atMs: number };
}

/** Inputs, waits and their timers (runtime/wakes.ts). */
export interface WakeAccess {
  scheduleWaitDeadline(waitId: string, deadlineMs: number): void;
  /** The session's unconsumed inputs, framed for the model, now consumed by a wake. */
  takePendingInputs(sessionId: string): Promise<string[]>;
  /** Tell subscribers an input arrived and announce the waits it woke (the tail every input's path shares). */
  announceInput(event: EventRow, woken: WaitRow[]): Promise<void>;
}

/** Sessions opened and closed (runtime/sessions.ts). */
export interface SessionAccess {
  /** Pin a new session's instruction header from the current sources. */
  pin(sessionId: string): Promise<void>;
  /** Whether a session's workbench runs no cell and has none queued. */
  idle(sessionId: string): boolean;
  /**
   * Close a session for good: no cell starts there again; its workbench stops after its current
   * turn (when driven) and the cell it runs (drain), or at once (hard stop). Resolves false when
   * the host stopped first.
   */
  close(sessionId: string, drain: boolean): Promise<boolean>;
}

/** Read-only views (runtime/status.ts). */
export interface StatusAccess {
  inspect(sessionId: string): unknown;
}

/** frontier.select (C12) for a session's live execution (runtime/frontiers.ts). */
export interface FrontierAccess {
  select(sessionId: string, executionId: string): Promise<unknown>;
}

/** What request handlers may use of the host: the basics, and one small view per service. */
export interface HostServices {
  readonly workspace: string;
  readonly dataDir: string;
  /** The log, through the one async Store (C21): every handler's reads and writes. */
  readonly store: Store;
  /** The sandbox workspace.run commands share with the workers (an empty prefix when none). */
  readonly sandbox: { commandPrefix(cwd?: string): string[]; describe(): SandboxView };
  /** The C17 limits mechanism every process the host starts gets (undefined: no limit set). */
  readonly limitsMechanism?: LimitsMechanism | undefined;
  now(): number;
  /** The environment a command starts from: the C15 minimal base, passed names, the host's tag. */
  baseEnv(): Record<string, string>;
  newId(prefix: string): string;
  notify(notification: Notification): void;
  readonly hooks: HookAccess;
  readonly skills: SkillAccess;
  readonly instructions: InstructionAccess;
  readonly wakes: WakeAccess;
  readonly sessions: SessionAccess;
  readonly status: StatusAccess;
  readonly frontiers: FrontierAccess;
  /** In-cell waits on peer requests (peer.result with wait_ms). */
  readonly peerSignals: PeerSignals;
  /** Remote namespaces over ssh (C14). */
  readonly remote: RemoteService;
}

/** Something subscribers (repl, log followers, a model driver) are told as it happens. */
export type Notification =
  | { type: "message"; session_id: string; event_id: number; text: string; at_ms: number }
  | { type: "wake"; session_id: string; wait_id: string; woken_by: string; at_ms: number; inputs: string[] }
  /** A deferred input's seconds passed: its session is woken (its open wait, if any, is woken too). */
  | { type: "deferred"; session_id: string; event_id: number; at_ms: number }
  | { type: "input"; session_id: string; event_id: number; source: string; attention: unknown; at_ms: number }
  | { type: "execution"; session_id: string; execution_id: string; status: string; at_ms: number }
  | { type: "hooks"; revision: string; epoch: number; at_ms: number }
  | { type: "kernel.reset"; session_id: string; generation: string; skills: string | null; at_ms: number }
  /** A workbench shut down after its idle timeout (C19); its session lives on. */
  | { type: "workbench.culled"; session_id: string; generation: string; idle_ms: number; at_ms: number }
  | { type: "session.stopped"; session_id: string; drain: boolean; at_ms: number }
  /** A model turn's progress: turn_start, request, delta, reply, refusal, error, fold, turn_end. */
  | { type: "model"; phase: string; session_id: string; at_ms: number; [field: string]: unknown };

/** Everything one request handler gets. */
export interface RequestContext {
  readonly host: HostServices;
  readonly live: LiveExecution;
  readonly requestId: string;
  /** The request's 1-based index in its cell (what a header revision it causes names as `step`). */
  readonly step?: number;
  /** Aborted when the cell ends: a handler still working then stops what it started. */
  readonly signal?: AbortSignal;
}
