import type { UsageRecord } from "@klbr/usage";
import type { FrontierFields } from "../turn-statements";

/** A reply of the transcript and what its calls became, for a turn that resumes mid-reply. */
export interface LastReply {
  requestId: string;
  /** The reply exactly as recorded. */
  reply: unknown;
  /** The records after the reply that answer one of its calls, in order; `executionStatus` null where a cell record has no execution yet. */
  answers: Array<{ kind: string; ref: string; callId: string | null; executionStatus: string | null }>;
}

/** The pin a fold installs with its frontier (C12 rule 3). */
export interface PinInstall {
  sessionId: string;
  frontierId: string;
  digest: string;
  record: unknown;
  pinnedAtMs: number;
  installedAtMs: number;
}

/** What a model step reads and writes (C10, C12), each one statement or one transaction. */
export interface TurnStore {
  /** The session's newest pin: id and text. */
  pinOf(sessionId: string): Promise<{ id: number; text: string } | undefined>;
  /** The id of the session's newest pin, without reading its record (a step needs the text only when the pin changed). */
  pinIdOf(sessionId: string): Promise<number | undefined>;
  /** The newest frontier not installed yet. */
  pendingFrontierOf(sessionId: string): Promise<FrontierFields | undefined>;
  /** The frontier the session's requests run under now. */
  installedFrontierOf(sessionId: string): Promise<FrontierFields | undefined>;
  /** Whether the session has a wait still waiting (a turn does not start then). */
  hasOpenWait(sessionId: string): Promise<boolean>;
  /** The session's newest reply record with the records after it; null when the transcript has no reply. */
  lastReply(sessionId: string): Promise<LastReply | null>;
  /** The newest orientation adoption's id (0: none): a change tells a turn to observe instructions again. */
  adoptionMark(): Promise<number>;
  /** One transaction: the request closed as answered and its `reply` transcript record; returns the record's seq. */
  commitModelReply(sessionId: string, id: string, end: { reply: unknown; responseModel: string | null; usage: UsageRecord | null; retries: number; endedAtMs: number }): Promise<number>;
  /** One transaction: the fold's new header pin and its frontier marked installed under it; returns the pin's record id. */
  installPin(pin: PinInstall): Promise<number>;
}
