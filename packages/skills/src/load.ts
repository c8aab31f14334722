import { lstat } from "node:fs/promises";
import { decodeSkillText } from "./body";
import { skillDigest } from "./digest";
import { SkillError } from "./errors";
import { readSkillFile } from "./read";
import type { LoadedSkill, SkillIndex } from "./types";

/**
 * Read one indexed skill's body again and return it only if its bytes still have the digest the
 * index recorded; otherwise SKILL_CHANGED (a body is refused rather than half-read). An id that
 * is unknown or was refused is SKILL_NOT_FOUND, and the message says why it was refused.
 */
export async function loadSkill(index: SkillIndex, id: string): Promise<LoadedSkill> {
  const entry = index.skills.find((skill) => skill.id === id);
  if (entry === undefined) {
    const refusals = index.refused.filter((refusal) => refusal.name === id);
    const why = refusals.map((refusal) => `${refusal.reason} in ${refusal.root} (${refusal.path})`).join("; ");
    throw new SkillError(
      "SKILL_NOT_FOUND",
      refusals.length > 0
        ? `skill ${JSON.stringify(id)} was refused: ${why}`
        : `skill ${JSON.stringify(id)} is not in the index`,
    );
  }
  const changed = (what: string) =>
    new SkillError("SKILL_CHANGED", `skill ${id} at ${entry.path} changed since it was indexed: ${what}`);
  const dir = await lstat(entry.path).catch(() => undefined);
  if (dir === undefined) throw changed("its directory is gone");
  if (!dir.isDirectory()) throw changed("its directory is no longer a plain directory");
  const read = await readSkillFile(entry.path);
  if (read.kind !== "bytes") throw changed(`SKILL.md is now ${read.kind}`);
  const digest = skillDigest(read.bytes);
  if (digest !== entry.digest) throw changed(`digest ${digest}, indexed ${entry.digest}`);
  const body = decodeSkillText(read.bytes);
  // Same digest means the same bytes the index decoded, so this cannot fail; keep the guard honest.
  // Stryker disable next-line ConditionalExpression,StringLiteral: unreachable, the same digest means the same bytes the index decoded as UTF-8
  if (body === undefined) throw changed("SKILL.md is not UTF-8");
  return { id, digest, body };
}
