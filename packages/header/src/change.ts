import { isDigest, sha256Hex } from "./digest.js";
import { describe, HeaderError, isHeaderError } from "./errors.js";
import { applyPatches, diffPatches } from "./patch.js";
import { checkSources, isWellFormedText, JOINED_SOURCE, joinSources, sourcesLineUp } from "./sources.js";
import type { Change, Patch, SourceInput } from "./types.js";

/**
 * What a change applies to: the source list it was made against, or a bare text whose parts
 * nobody recorded (a head pin carries only its text).
 */
export type ChangeBase = string | readonly SourceInput[];

/** What a change must reach: the digest of the joined text and, when known, each source's name and digest. */
export interface ChangeTarget {
  digest: string;
  sources?: readonly { name: string; digest?: string }[];
}

/** The verified outcome of applying a change: the exact text, and the per-source texts when patched per source. */
export interface AppliedChange {
  text: string;
  digest: string;
  sources: SourceInput[] | null;
}

function baseOf(base: ChangeBase): { text: string; sources: SourceInput[] | null } {
  if (typeof base === "string") {
    if (!isWellFormedText(base)) {
      throw new HeaderError("HEADER_INVALID_SOURCES", `base text ${describe(base)} is not well-formed Unicode`);
    }
    return { text: base, sources: null };
  }
  const sources = checkSources(base);
  return { text: joinSources(sources), sources };
}

/**
 * Whether a change patches each source (true) or the joined text under `instructions` (false):
 * per source exactly when the base has recorded sources and the target's names line up with them.
 */
export function patchesPerSource(base: ChangeBase, targetNames?: readonly { name: string }[]): boolean {
  return typeof base !== "string" && sourcesLineUp(base, targetNames ?? base);
}

/**
 * Apply `change` to `base` and verify it: the diff's `base_digest` must be the base's SHA-256,
 * every patch must match exactly, and the result must have `target.digest` (and each target
 * source digest, when patched per source). Throws a HeaderError naming the first failure.
 */
export function applyChange(base: ChangeBase, change: Change, target: ChangeTarget): AppliedChange {
  const { text: baseText, sources: baseSources } = baseOf(base);
  if (!isDigest(target.digest)) {
    throw new HeaderError("HEADER_INVALID_RECORD", `target digest ${describe(target.digest)} is not a SHA-256 hex digest`);
  }
  if (change.form === "full") {
    if (!isWellFormedText(change.text)) {
      throw new HeaderError("HEADER_INVALID_RECORD", `full change text ${describe(change.text)} is not well-formed Unicode`);
    }
    const digest = sha256Hex(change.text);
    if (digest !== target.digest) {
      throw new HeaderError("HEADER_RESULT_MISMATCH", `full text has digest ${digest}, the revision says ${target.digest}`);
    }
    return { text: change.text, digest, sources: null };
  }
  if (change.form !== "diff") {
    throw new HeaderError("HEADER_INVALID_RECORD", `change form ${describe((change as { form?: unknown }).form)} is neither diff nor full`);
  }
  const baseDigest = sha256Hex(baseText);
  if (change.base_digest !== baseDigest) {
    throw new HeaderError("HEADER_BASE_MISMATCH", `change is against ${describe(change.base_digest)}, the base text is ${baseDigest}`);
  }
  if (!Array.isArray(change.patches)) {
    throw new HeaderError("HEADER_PATCH_INVALID", `change patches ${describe(change.patches)} is not an array`);
  }
  let text: string;
  let sources: SourceInput[] | null = null;
  if (baseSources !== null && patchesPerSource(baseSources, target.sources)) {
    sources = applyPerSource(baseSources, change.patches);
    const wanted = target.sources;
    if (wanted) {
      sources.forEach((source, index) => {
        // Stryker disable next-line OptionalChaining: patchesPerSource made target.sources line up with the base, so wanted[index] exists
        const expected = wanted[index]?.digest;
        if (expected !== undefined && sha256Hex(source.text) !== expected) {
          throw new HeaderError("HEADER_SOURCE_MISMATCH", `patched source ${describe(source.name)} does not have its recorded digest ${expected}`);
        }
      });
    }
    text = joinSources(sources);
  } else {
    const stray = change.patches.find((patch) => patch?.source !== JOINED_SOURCE);
    if (stray !== undefined) {
      throw new HeaderError("HEADER_PATCH_INVALID", `patch source ${describe(stray?.source)} where the joined text is patched as ${JOINED_SOURCE}`);
    }
    text = applyPatches(baseText, change.patches);
  }
  const digest = sha256Hex(text);
  if (digest !== target.digest) {
    throw new HeaderError("HEADER_RESULT_MISMATCH", `patched text has digest ${digest}, the revision says ${target.digest}`);
  }
  return { text, digest, sources };
}

function applyPerSource(base: readonly SourceInput[], patches: readonly Patch[]): SourceInput[] {
  const order = new Map(base.map((source, index) => [source.name, index]));
  const groups: Patch[][] = base.map(() => []);
  let last = 0;
  for (const patch of patches) {
    const index = order.get(patch?.source);
    if (index === undefined) {
      throw new HeaderError("HEADER_PATCH_INVALID", `patch source ${describe(patch?.source)} is not one of the base sources`);
    }
    if (index < last) {
      throw new HeaderError("HEADER_PATCH_INVALID", `patch for ${describe(patch.source)} comes after a patch for a later source`);
    }
    last = index;
    groups[index]!.push(patch);
  }
  return base.map((source, index) => ({ name: source.name, text: applyPatches(source.text, groups[index]!) }));
}

/**
 * Keep `proposed` only if it verifiably turns `base` into the text of `next`; otherwise (or when
 * nothing is proposed) carry the whole text, so a reader never reconstructs a text nobody wrote.
 */
export function verifiedChange(base: ChangeBase, proposed: Change | null, next: readonly SourceInput[]): Change {
  const sources = checkSources(next);
  const text = joinSources(sources);
  if (proposed !== null) {
    try {
      const target = { digest: sha256Hex(text), sources: sources.map(({ name, text: t }) => ({ name, digest: sha256Hex(t) })) };
      applyChange(base, proposed, target);
      return structuredClone(proposed);
    } catch (error) {
      if (!isHeaderError(error)) throw error;
    }
  }
  return { form: "full", text };
}

/**
 * The change from `base` to the sources `next`: verified line patches (per source when the names
 * line up, else over the joined text as `instructions`), or the whole text when they do not verify.
 */
export function revise(base: ChangeBase, next: readonly SourceInput[]): Change {
  const { text: baseText, sources: baseSources } = baseOf(base);
  const sources = checkSources(next);
  let patches: Patch[] | null = [];
  if (baseSources !== null && sourcesLineUp(baseSources, sources)) {
    for (let i = 0; i < sources.length && patches !== null; i++) {
      const more = diffPatches(baseSources[i]!.text, sources[i]!.text, sources[i]!.name);
      patches = more === null ? null : [...patches, ...more];
    }
  } else {
    patches = diffPatches(baseText, joinSources(sources), JOINED_SOURCE);
  }
  const proposed: Change | null = patches === null ? null : { form: "diff", base_digest: sha256Hex(baseText), patches };
  return verifiedChange(base, proposed, sources);
}
