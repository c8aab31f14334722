import { sha256Hex } from "./digest.js";
import { describe, HeaderError } from "./errors.js";
import type { RecordedSource, SourceInput } from "./types.js";

/** The source name a change uses when it patches the joined text instead of each source. */
export const JOINED_SOURCE = "instructions";

const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** True when `text` is well-formed Unicode, so its UTF-8 digest names exactly one text. */
export function isWellFormedText(value: unknown): value is string {
  return typeof value === "string" && !LONE_SURROGATE.test(value);
}

/**
 * Check a source list and copy it to plain `{name, text}` objects: names are non-empty and
 * distinct, texts are well-formed strings (a lone surrogate would make two texts share a digest).
 */
export function checkSources(sources: readonly SourceInput[]): SourceInput[] {
  if (!Array.isArray(sources)) {
    throw new HeaderError("HEADER_INVALID_SOURCES", `sources must be an array, got ${describe(sources)}`);
  }
  const seen = new Set<string>();
  return sources.map((source, index) => {
    if (typeof source !== "object" || source === null) {
      throw new HeaderError("HEADER_INVALID_SOURCES", `source ${index} is not an object: ${describe(source)}`);
    }
    const { name, text } = source;
    if (!isWellFormedText(name) || name.length === 0) {
      throw new HeaderError("HEADER_INVALID_SOURCES", `source ${index} has an invalid name ${describe(name)}`);
    }
    if (seen.has(name)) {
      throw new HeaderError("HEADER_INVALID_SOURCES", `source name ${describe(name)} appears twice`);
    }
    seen.add(name);
    if (!isWellFormedText(text)) {
      throw new HeaderError("HEADER_INVALID_SOURCES", `source ${describe(name)} has an invalid text ${describe(text)}`);
    }
    return { name, text };
  });
}

/** The instruction text of a source list: the sources' texts concatenated in order, each as-is. */
export function joinSources(sources: readonly SourceInput[]): string {
  return sources.map((source) => source.text).join("");
}

/** The sources as a revision records them: name, SHA-256 of the text, and the text. */
export function recordSources(sources: readonly SourceInput[]): RecordedSource[] {
  return checkSources(sources).map(({ name, text }) => ({ name, digest: sha256Hex(text), text }));
}

/** True when two source lists line up by name: the same names in the same order. */
export function sourcesLineUp(a: readonly { name: string }[], b: readonly { name: string }[]): boolean {
  // Stryker disable next-line OptionalChaining: the lengths are equal (checked first), so b[index] exists
  return a.length === b.length && a.every((source, index) => source.name === b[index]?.name);
}
