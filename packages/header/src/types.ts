/** Why a head was pinned: the start of a session, a fold, or a fold that covered the text's only support. */
export type PinReason = "session_start" | "fold" | "fold_covered_revision";

/** `prompt.header`: the text this transcript pinned at its head. */
export interface HeaderPin {
  type: "header_pin";
  /** SHA-256 of `text`. */
  digest: string;
  text: string;
  reason: PinReason;
  pinned_at_ms: number;
}

/** One named instruction source as given to the functions of this package. */
export interface SourceInput {
  name: string;
  text: string;
}

/** One named instruction source as recorded in a revision. */
export interface RecordedSource {
  name: string;
  /** SHA-256 of `text`. */
  digest: string;
  text: string;
}

/**
 * One verified replacement of whole lines: `old_lines` start at line `start_line` (1-based) of the
 * base text of `source`; an insertion has no old lines and goes before that line (line count + 1
 * appends). Lines keep their endings.
 */
export interface Patch {
  source: string;
  start_line: number;
  old_lines: string[];
  new_lines: string[];
}

/** A change carried as patches against the base text whose digest is `base_digest`. */
export interface DiffChange {
  form: "diff";
  base_digest: string;
  patches: Patch[];
}

/** A change carried as the whole new text. */
export interface FullChange {
  form: "full";
  text: string;
}

/** How a revision reaches its text from the newest text the transcript can reconstruct. */
export type Change = DiffChange | FullChange;

/** A change a session made through a tool call: attributed to that execution. */
export interface SessionActor {
  origin: "session";
  execution_id: string;
  step: number;
  path?: string;
  reason?: string;
}

/** A change nothing in the transcript accounts for: what is known, and no invented actor. */
export interface HostActor {
  origin: "host";
  reason?: string;
  path?: string;
}

/** Who changed the instructions. */
export type Actor = SessionActor | HostActor;

/** `prompt.revision`: an observation that the instruction text changed. */
export interface HeaderRevision {
  type: "header_revision";
  /** SHA-256 of the current (joined) text. */
  digest: string;
  change: Change;
  sources: RecordedSource[];
  actor: Actor;
  observed_at_ms: number;
}

/** One link of a header chain, in the order the transcript recorded it. */
export type HeaderRecord = HeaderPin | HeaderRevision;
