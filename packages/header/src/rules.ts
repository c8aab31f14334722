import { revise } from "./change.js";
import { resolve, type Resolution } from "./chain.js";
import { sha256Hex } from "./digest.js";
import { HeaderError } from "./errors.js";
import { checkActor, checkTime } from "./records.js";
import { checkSources, joinSources, recordSources } from "./sources.js";
import type { Actor, HeaderPin, HeaderRevision, PinReason, SourceInput } from "./types.js";

function pin(sources: readonly SourceInput[], now: number, reason: PinReason): HeaderPin {
  const pinnedAt = checkTime(now, "pinned_at_ms");
  const text = joinSources(checkSources(sources));
  return { type: "header_pin", digest: sha256Hex(text), text, reason, pinned_at_ms: pinnedAt };
}

function headOf(chain: readonly unknown[]): Resolution {
  const resolution = resolve(chain);
  if (resolution.head === -1) throw new HeaderError("HEADER_NO_PIN", "the chain has no header_pin yet: pin at session start first");
  return resolution;
}

/** Rule 1: with no pin yet, the transcript pins the current text of `sources` (`session_start`). */
export function pinAtStart(sources: readonly SourceInput[], now: number): HeaderPin {
  return pin(sources, now, "session_start");
}

/**
 * Rule 2: when the joined text of `sources` differs from the newest text the chain reconstructs,
 * the head keeps its bytes and this returns the observation to append (a verified change against
 * that text, attributed to `actor`); null when the text is unchanged.
 */
export function observe(chain: readonly unknown[], sources: readonly SourceInput[], actor: Actor, now: number): HeaderRevision | null {
  const current = headOf(chain);
  const observedAt = checkTime(now, "observed_at_ms");
  const checkedActor = checkActor(actor);
  const next = checkSources(sources);
  const text = joinSources(next);
  const digest = sha256Hex(text);
  if (digest === current.digest) return null;
  // A chain whose tail does not reconstruct leaves no base a reader can reach: carry the whole
  // text, so the chain is readable again from this observation on.
  const broken = current.text === null || current.index !== chain.length - 1;
  const change = broken ? { form: "full" as const, text } : revise(current.sources ?? current.text!, next);
  return { type: "header_revision", digest, change, sources: recordSources(next), actor: checkedActor, observed_at_ms: observedAt };
}

/**
 * Whether the chain's current text stays readable once the revisions whose digests are in
 * `covered` can no longer be rendered: the head is readable, an uncovered full revision is,
 * and an uncovered diff is when a readable link has its base digest.
 */
export function currentTextSupported(chain: readonly unknown[], covered: Iterable<string>): boolean {
  const resolution = resolve(chain);
  if (resolution.digest === null) return false;
  const gone = new Set(covered);
  const readable = new Set<string>();
  for (let i = resolution.head; i <= resolution.index; i++) {
    const link = chain[i] as { type: string; digest: string; change?: { form: string; base_digest?: string } };
    if (link.type === "header_pin") readable.add(link.digest);
    else if (gone.has(link.digest)) continue;
    else if (link.change?.form === "full") readable.add(link.digest);
    else if (link.change?.base_digest !== undefined && readable.has(link.change.base_digest)) readable.add(link.digest);
  }
  return readable.has(resolution.digest);
}

/**
 * Rule 3: a fold moves the head to the current text of `sources`. The reason is
 * `fold_covered_revision` when the text the transcript was running under was readable only
 * through revisions the fold covers (`coveredRevisionDigests`), else `fold`.
 */
export function fold(chain: readonly unknown[], sources: readonly SourceInput[], now: number, coveredRevisionDigests: Iterable<string>): HeaderPin {
  const current = headOf(chain);
  const supported = current.digest === null || currentTextSupported(chain, coveredRevisionDigests);
  return pin(sources, now, supported ? "fold" : "fold_covered_revision");
}
