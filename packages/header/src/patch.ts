import { diffLines } from "diff";
import { describe, HeaderError } from "./errors.js";
import { splitLines } from "./lines.js";
import type { Patch } from "./types.js";

/**
 * Beyond this many edited lines a line diff stops being a readable observation; the caller then
 * carries the whole text instead (and jsdiff stops early rather than running O(N*D)).
 */
const MAX_EDIT_LENGTH = 1024;

function isLine(value: unknown): value is string {
  if (typeof value !== "string" || value.length === 0) return false;
  const newline = value.indexOf("\n");
  return newline === -1 || newline === value.length - 1;
}

/**
 * Check one patch's shape: a source name, a 1-based `start_line`, and arrays of lines (each
 * non-empty, with "\n" only as its last character), not both empty.
 */
export function checkPatch(patch: unknown): Patch {
  if (typeof patch !== "object" || patch === null || Array.isArray(patch)) {
    throw new HeaderError("HEADER_PATCH_INVALID", `a patch must be an object, got ${describe(patch)}`);
  }
  const keys = Object.keys(patch).sort().join(",");
  if (keys !== "new_lines,old_lines,source,start_line") {
    throw new HeaderError("HEADER_PATCH_INVALID", `a patch has the fields source, start_line, old_lines, new_lines; got ${describe(keys)}`);
  }
  const { source, start_line, old_lines, new_lines } = patch as Record<string, unknown>;
  if (typeof source !== "string" || source.length === 0) {
    throw new HeaderError("HEADER_PATCH_INVALID", `patch source ${describe(source)} is not a name`);
  }
  if (typeof start_line !== "number" || !Number.isSafeInteger(start_line) || start_line < 1) {
    throw new HeaderError("HEADER_PATCH_INVALID", `patch start_line ${describe(start_line)} is not a line number (1-based)`);
  }
  for (const [field, lines] of [["old_lines", old_lines], ["new_lines", new_lines]] as const) {
    if (!Array.isArray(lines)) {
      throw new HeaderError("HEADER_PATCH_INVALID", `patch ${field} must be an array, got ${describe(lines)}`);
    }
    const bad = lines.findIndex((line) => !isLine(line));
    if (bad !== -1) {
      throw new HeaderError("HEADER_PATCH_INVALID", `patch ${field}[${bad}] is ${describe(lines[bad])}, which is not one line`);
    }
  }
  const olds = old_lines as string[];
  const news = new_lines as string[];
  if (olds.length === 0 && news.length === 0) {
    throw new HeaderError("HEADER_PATCH_INVALID", `patch at ${source}:${start_line} changes nothing`);
  }
  return { source, start_line, old_lines: [...olds], new_lines: [...news] };
}

/**
 * A cheap lower bound on the line edit distance: no alignment keeps more lines than the two texts
 * share as multisets. Lets a wholesale rewrite skip the O(N*D) search jsdiff would abandon anyway.
 */
// Stryker disable next-line BlockStatement: a weaker (smaller) bound only hands more texts to jsdiff, whose maxEditLength returns the same null
function editLengthLowerBound(a: readonly string[], b: readonly string[]): number {
  const counts = new Map<string, number>();
  for (const line of a) counts.set(line, (counts.get(line) ?? 0) + 1);
  let shared = 0;
  for (const line of b) {
    const left = counts.get(line) ?? 0;
    if (left > 0) {
      shared++;
      // Stryker disable next-line ArithmeticOperator: a weaker (smaller) bound only hands more texts to jsdiff, whose maxEditLength returns the same null
      counts.set(line, left - 1);
    }
  }
  return a.length + b.length - 2 * shared;
}

/**
 * The line patches that turn `oldText` into `newText`, labelled `source`: one patch per run of
 * changed lines of a jsdiff line diff (no fuzz, no line-ending conversion, so "\r\n" and "\n"
 * differ). Null when the texts differ too much for a diff to be worth carrying.
 */
export function diffPatches(oldText: string, newText: string, source: string): Patch[] | null {
  // Content comes from our own split, jsdiff only says where: verification catches any disagreement.
  const oldLines = splitLines(oldText);
  const newLines = splitLines(newText);
  if (editLengthLowerBound(oldLines, newLines) > MAX_EDIT_LENGTH) return null;
  const changes = diffLines(oldText, newText, { maxEditLength: MAX_EDIT_LENGTH });
  if (changes === undefined) return null;
  const patches: Patch[] = [];
  let oldIndex = 0;
  let newIndex = 0;
  let current: Patch | null = null;
  for (const change of changes) {
    const count = change.count;
    if (!change.added && !change.removed) {
      if (current) patches.push(current);
      current = null;
      oldIndex += count;
      newIndex += count;
      continue;
    }
    current ??= { source, start_line: oldIndex + 1, old_lines: [], new_lines: [] };
    if (change.removed) {
      current.old_lines.push(...oldLines.slice(oldIndex, oldIndex + count));
      oldIndex += count;
    } else {
      current.new_lines.push(...newLines.slice(newIndex, newIndex + count));
      newIndex += count;
    }
  }
  if (current) patches.push(current);
  return patches;
}

/**
 * Apply patches to `text` exactly: each patch's old lines must be the text's lines at
 * `start_line` (counted in the original text), patches ascend and never overlap. No fuzz: any
 * difference fails with HEADER_PATCH_MISMATCH, a malformed patch with HEADER_PATCH_INVALID.
 */
export function applyPatches(text: string, patches: readonly Patch[]): string {
  const lines = splitLines(text);
  const out: string[] = [];
  let next = 0; // 0-based index of the first original line not yet consumed
  for (const raw of patches) {
    const patch = checkPatch(raw);
    const at = patch.start_line - 1;
    if (at < next) {
      throw new HeaderError("HEADER_PATCH_INVALID", `patch at ${patch.source}:${patch.start_line} overlaps or precedes the patch before it`);
    }
    if (at + patch.old_lines.length > lines.length || at > lines.length) {
      throw new HeaderError("HEADER_PATCH_MISMATCH", `patch at ${patch.source}:${patch.start_line} reaches past the ${lines.length} lines of its base`);
    }
    for (let i = 0; i < patch.old_lines.length; i++) {
      if (lines[at + i] !== patch.old_lines[i]) {
        throw new HeaderError(
          "HEADER_PATCH_MISMATCH",
          `patch at ${patch.source}:${patch.start_line} expects ${describe(patch.old_lines[i])} at line ${at + i + 1}, base has ${describe(lines[at + i])}`,
        );
      }
    }
    out.push(...lines.slice(next, at), ...patch.new_lines);
    next = at + patch.old_lines.length;
  }
  out.push(...lines.slice(next));
  return out.join("");
}
