import { applyChange } from "./change.js";
import { sha256Hex } from "./digest.js";
import { HeaderError, isHeaderError, type HeaderErrorCode } from "./errors.js";
import { parseHeaderPin, parseHeaderRevision } from "./records.js";
import { joinSources } from "./sources.js";
import type { HeaderRevision, RecordedSource } from "./types.js";

/** Where and why resolution stopped: the first link after the head that did not reconstruct. */
export interface ResolveStop {
  /** Index in the chain of the link that failed. */
  index: number;
  code: HeaderErrorCode;
  message: string;
}

/** The exact current text of a chain, and how far the chain reconstructed. */
export interface Resolution {
  /** The text of the last link that reconstructed; null when not even the head did (or there is none). */
  text: string | null;
  /** SHA-256 of `text`. */
  digest: string | null;
  /** The recorded sources of that text; null when its parts were never recorded (a pin). */
  sources: RecordedSource[] | null;
  /** Index of the head: the last `header_pin` in the chain, or -1. */
  head: number;
  /** Index of the last link that reconstructed, or -1. */
  index: number;
  /** True when every link from the head to the end reconstructed (`index` is then the last link). */
  complete: boolean;
  /** The link that stopped the chain, or null when it is complete. */
  stopped: ResolveStop | null;
}

interface State {
  text: string;
  digest: string;
  sources: RecordedSource[] | null;
}

/**
 * Verify one revision against the state before it: its recorded sources match their digests and
 * join to its digest, and its change reconstructs that text from the state. Returns the new state.
 */
function step(state: State, raw: unknown): State {
  const revision: HeaderRevision = parseHeaderRevision(raw);
  for (const source of revision.sources) {
    if (sha256Hex(source.text) !== source.digest) {
      throw new HeaderError("HEADER_SOURCE_MISMATCH", `source ${JSON.stringify(source.name)} text does not have its recorded digest ${source.digest}`);
    }
  }
  const joined = joinSources(revision.sources);
  if (sha256Hex(joined) !== revision.digest) {
    throw new HeaderError("HEADER_SOURCE_MISMATCH", `the recorded sources do not join to the revision digest ${revision.digest}`);
  }
  const applied = applyChange(state.sources ?? state.text, revision.change, { digest: revision.digest, sources: revision.sources });
  return { text: applied.text, digest: revision.digest, sources: revision.sources };
}

function stopOf(index: number, error: unknown): ResolveStop {
  if (!isHeaderError(error)) throw error;
  return { index, code: error.code, message: error.message };
}

/**
 * The exact current text of a chain (what `runtime.instructions` serves): start at the last pin,
 * apply each later revision with verification; at a link that does not reconstruct keep the last
 * text that did, and resume only at a later full revision (verified on its own). Never throws for
 * a bad link; `stopped` names the first, `index` the last link that reconstructed.
 */
export function resolve(chain: readonly unknown[]): Resolution {
  let head = -1;
  // Stryker disable next-line ArithmeticOperator: starting past the end only reads more undefined links, which are no pin
  for (let i = chain.length - 1; i >= 0; i--) {
    if ((chain[i] as { type?: unknown } | null)?.type === "header_pin") {
      head = i;
      break;
    }
  }
  const empty = { text: null, digest: null, sources: null, head, index: -1 };
  if (head === -1) {
    if (chain.length === 0) return { ...empty, complete: true, stopped: null };
    const error = new HeaderError("HEADER_NO_PIN", "the chain has no header_pin to start from");
    return { ...empty, complete: false, stopped: stopOf(0, error) };
  }
  let state: State;
  try {
    const pin = parseHeaderPin(chain[head]);
    const digest = sha256Hex(pin.text);
    if (digest !== pin.digest) {
      throw new HeaderError("HEADER_RESULT_MISMATCH", `pin text has digest ${digest}, the pin says ${pin.digest}`);
    }
    state = { text: pin.text, digest, sources: null };
  } catch (error) {
    return { ...empty, complete: false, stopped: stopOf(head, error) };
  }
  let index = head;
  let stopped: ResolveStop | null = null;
  for (let i = head + 1; i < chain.length; i++) {
    // Past a link that did not reconstruct, only a full revision (verified on its own) makes the
    // chain readable again; the observation after a failure carries one (rule 2).
    if (index !== i - 1 && !isFullRevision(chain[i])) continue;
    try {
      state = step(state, chain[i]);
      index = i;
    } catch (error) {
      stopped ??= stopOf(i, error);
    }
  }
  return { ...state, head, index, complete: stopped === null, stopped };
}

function isFullRevision(link: unknown): boolean {
  return (link as { change?: { form?: unknown } } | null)?.change?.form === "full";
}
