import { formatStamp as transcriptStamp, MAX_STAMP_MS } from "@klbr/transcript";
import { applyChange, type ChangeBase } from "./change.js";
import { sha256Hex } from "./digest.js";
import { HeaderError, isHeaderError } from "./errors.js";
import { checkTime, parseHeaderRevision } from "./records.js";
import { joinSources } from "./sources.js";
import type { Actor, HeaderRevision, Patch } from "./types.js";

/** The second line of every observation: it names the mechanism so two instruction texts are not ambiguous. */
export const OBSERVATION_NOTICE =
  "the header of this transcript is the revision it started under; the text below is current from here on.\n";

/** The marker after a rendered line that has no line ending (the last line of a text). */
export const NO_NEWLINE_MARKER = "\\ No newline at end of file\n";

/**
 * A stamp as the model reads it (C9): `YYYY-MM-DDTHH:MM:SSZ`, seconds rounded down; epoch zero
 * reads `time unknown`. The text is @klbr/transcript's (one function, one answer); only the
 * refusal keeps this package's code.
 */
export function formatStamp(ms: number): string {
  checkTime(ms);
  if (ms > MAX_STAMP_MS) throw new HeaderError("HEADER_INVALID_TIME", `time ${ms} is past year 9999`);
  return transcriptStamp(ms);
}

/** Who changed the text, as the observation line says it (C9). */
export function describeActor(actor: Actor): string {
  return actor.origin === "session"
    ? `changed by this session (execution ${actor.execution_id}, step ${actor.step})`
    : "changed outside this transcript";
}

function renderLines(prefix: string, lines: readonly string[]): string {
  return lines.map((line) => (line.endsWith("\n") ? `${prefix}${line}` : `${prefix}${line}\n${NO_NEWLINE_MARKER}`)).join("");
}

/**
 * Render patches as unified-diff-like hunks: `@@ <source> -<start>,<old count> +<start in the new
 * text>,<new count> @@`, then `-` old lines and `+` new lines, each with its own ending; a line
 * without an ending is followed by `\ No newline at end of file`. Line numbers are 1-based and an
 * insertion's old count is 0 at the line it goes before.
 */
export function renderPatches(patches: readonly Patch[]): string {
  const shift = new Map<string, number>();
  return patches
    .map((patch) => {
      const offset = shift.get(patch.source) ?? 0;
      shift.set(patch.source, offset + patch.new_lines.length - patch.old_lines.length);
      const header = `@@ ${patch.source} -${patch.start_line},${patch.old_lines.length} +${patch.start_line + offset},${patch.new_lines.length} @@\n`;
      return header + renderLines("-", patch.old_lines) + renderLines("+", patch.new_lines);
    })
    .join("");
}

/**
 * The observation a revision renders at the sequence where it was noticed, byte for byte:
 * the stamped line naming the mechanism and the actor, the notice line, then the current text
 * (full form) or the patch that reaches it (diff form). Given the `base` it applies to, a diff
 * is verified first and the whole current text is shown instead when it does not reconstruct.
 */
export function renderObservation(revision: HeaderRevision, base?: ChangeBase): string {
  const checked = parseHeaderRevision(revision);
  const line = `[${formatStamp(checked.observed_at_ms)} · instructions changed for this runtime · ${describeActor(checked.actor)}]\n`;
  return line + OBSERVATION_NOTICE + renderBody(checked, base);
}

function renderBody(revision: HeaderRevision, base: ChangeBase | undefined): string {
  const { change } = revision;
  if (change.form === "full") return change.text;
  if (base === undefined) return renderPatches(change.patches);
  try {
    applyChange(base, change, { digest: revision.digest, sources: revision.sources });
    return renderPatches(change.patches);
  } catch (error) {
    if (!isHeaderError(error)) throw error;
  }
  const whole = joinSources(revision.sources);
  if (sha256Hex(whole) !== revision.digest) {
    throw new HeaderError("HEADER_SOURCE_MISMATCH", `revision ${revision.digest} neither patches its base nor joins its sources to its digest`);
  }
  return whole;
}
