import { createHash } from "node:crypto";
import { isDigest } from "./digest";
import { SkillError } from "./errors";
import { isSkillId } from "./id";
import type { SkillDigestEntry } from "./types";

/**
 * The set revision (C4): SHA-256 over the entries sorted by id, each fed as u64BE(id byte
 * length), the id bytes, then the 32 raw bytes of its body digest. Input order does not matter.
 */
export function skillSetRevision(entries: readonly SkillDigestEntry[]): string {
  const seen = new Set<string>();
  for (const { id, digest } of entries) {
    if (!isSkillId(id)) throw new SkillError("SKILL_INVALID_ID", `invalid skill id ${JSON.stringify(id)}`);
    if (!isDigest(digest)) {
      throw new SkillError("SKILL_INVALID_DIGEST", `skill ${id} has an invalid digest ${JSON.stringify(digest)}`);
    }
    if (seen.has(id)) throw new SkillError("SKILL_DUPLICATE_ID", `skill id ${id} appears twice`);
    seen.add(id);
  }
  // Ids are ASCII by the id rule, so UTF-8 byte order equals code-unit order; compare bytes anyway.
  // Stryker disable next-line StringLiteral: equivalent, an empty encoding name is read as utf8
  const sorted = [...entries].sort((a, b) => Buffer.compare(Buffer.from(a.id, "utf8"), Buffer.from(b.id, "utf8")));
  const hash = createHash("sha256");
  const length = Buffer.alloc(8);
  for (const { id, digest } of sorted) {
    // Stryker disable next-line StringLiteral: equivalent, an empty encoding name is read as utf8
    const idBytes = Buffer.from(id, "utf8");
    length.writeBigUInt64BE(BigInt(idBytes.length));
    hash.update(length);
    hash.update(idBytes);
    hash.update(Buffer.from(digest, "hex"));
  }
  return hash.digest("hex");
}
