import { MAX_SKILL_BYTES } from "./constants";

/** The verdict on one SKILL.md's bytes: the decoded body, or the reason it is refused. */
export type BodyVerdict = { ok: true; body: string } | { ok: false; reason: "oversize" | "non_utf8" | "title_mismatch" };

// ignoreBOM keeps a leading U+FEFF in the text, so the body's UTF-8 is exactly the file's bytes
// and the Python side recomputes the same digest from it.
// Stryker disable next-line StringLiteral: static: with "" TextDecoder throws at import, so every suite fails to load, which the vitest runner reports as no test run rather than a kill
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decode SKILL.md bytes as strict UTF-8 (a BOM is kept); undefined when they are not UTF-8. */
export function decodeSkillText(bytes: Uint8Array): string | undefined {
  try {
    return decoder.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The first non-empty line of a SKILL.md text, without its line ending and trailing blanks, or
 * undefined when there is none. Lines end at "\n" (a "\r" before it belongs to the ending); a
 * line of only spaces and tabs is empty.
 */
export function skillTitleLine(text: string): string | undefined {
  for (const raw of text.split("\n")) {
    const line = raw.replace(/[ \t\r]+$/, "");
    // Stryker disable next-line Regex,StringLiteral: equivalent, after the trailing [ \t\r] trim a non-empty line ends in another character, so this second trim never empties it
    if (line.replace(/^[ \t]+/, "") !== "") return line;
  }
  return undefined;
}

/** True when the text's first non-empty line is exactly `# <id>` (no indentation, one space). */
export function hasSkillTitle(text: string, id: string): boolean {
  return skillTitleLine(text) === `# ${id}`;
}

/** Check one SKILL.md's bytes for skill `id`, in precedence order: oversize, non_utf8, title_mismatch. */
export function checkSkillBody(id: string, bytes: Uint8Array): BodyVerdict {
  if (bytes.byteLength > MAX_SKILL_BYTES) return { ok: false, reason: "oversize" };
  const text = decodeSkillText(bytes);
  if (text === undefined) return { ok: false, reason: "non_utf8" };
  if (!hasSkillTitle(text, id)) return { ok: false, reason: "title_mismatch" };
  return { ok: true, body: text };
}

