import { isDigest, skillDigest } from "./digest";
import { SkillError } from "./errors";
import { isSkillId } from "./id";
import { findDuplicateKey, isWellFormedText } from "./json";
import { skillSetRevision } from "./revision";
import type { LoadedSkill, SkillsFile } from "./types";

// Stryker disable next-line StringLiteral: static: with "" TextDecoder throws at import, so every suite fails to load, which the vitest runner reports as no test run rather than a kill
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Serialize a skill set as the `skills.json` text (C4); key order is fixed. */
export function encodeSkillsFile(set: SkillsFile): string {
  return JSON.stringify({
    revision: set.revision,
    skills: set.skills.map(({ id, digest, body }) => ({ id, digest, body })),
  });
}

function invalid(message: string): SkillError {
  return new SkillError("SKILLS_FILE_INVALID", `skills file is invalid: ${message}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  // Stryker disable next-line ConditionalExpression: equivalent, a string or number has none of the required own keys, so hasExactKeys refuses it with the same message
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function hasExactKeys(value: Record<string, unknown>, keys: readonly string[]): boolean {
  const own = Object.keys(value);
  return own.length === keys.length && keys.every((key) => Object.hasOwn(value, key));
}

/**
 * Parse and verify a `skills.json` exactly as the Python worker's install_skills does, in the
 * same order: strict UTF-8 JSON without duplicate keys, the exact shape (SKILLS_FILE_INVALID);
 * then per skill in file order its id, digest form, uniqueness and body digest; then the revision.
 */
export function parseSkillsFile(input: string | Uint8Array): SkillsFile {
  let text: string;
  if (typeof input === "string") {
    text = input;
  } else {
    try {
      text = decoder.decode(input);
    } catch {
      throw invalid("not UTF-8");
    }
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw invalid(`not JSON (${(error as Error).message})`);
  }
  const duplicate = findDuplicateKey(text);
  if (duplicate !== undefined) throw invalid(`duplicate key ${JSON.stringify(duplicate)}`);
  if (!isPlainObject(data) || !hasExactKeys(data, ["revision", "skills"])) {
    throw invalid('expected an object with exactly "revision" and "skills"');
  }
  const { revision, skills } = data;
  if (typeof revision !== "string") throw invalid('"revision" is not a string');
  if (!Array.isArray(skills)) throw invalid('"skills" is not an array');
  skills.forEach((item: unknown, at) => {
    if (!isPlainObject(item) || !hasExactKeys(item, ["id", "digest", "body"])) {
      throw invalid(`skills[${at}] is not an object with exactly "id", "digest" and "body"`);
    }
    for (const key of ["id", "digest", "body"]) {
      if (typeof item[key] !== "string") throw invalid(`skills[${at}].${key} is not a string`);
    }
    if (!isWellFormedText(item["body"] as string)) throw invalid(`skills[${at}].body holds a lone surrogate`);
  });
  const entries = skills as LoadedSkill[];
  const seen = new Set<string>();
  for (const { id, digest, body } of entries) {
    if (!isSkillId(id)) throw new SkillError("SKILL_INVALID_ID", `invalid skill id ${JSON.stringify(id)}`);
    if (!isDigest(digest)) {
      throw new SkillError("SKILL_INVALID_DIGEST", `skill ${id} has an invalid digest ${JSON.stringify(digest)}`);
    }
    if (seen.has(id)) throw new SkillError("SKILL_DUPLICATE_ID", `skill id ${id} appears twice`);
    seen.add(id);
    // Stryker disable next-line StringLiteral: equivalent, an empty encoding name is read as utf8
    const actual = skillDigest(Buffer.from(body, "utf8"));
    if (actual !== digest) {
      throw new SkillError("SKILL_DIGEST_MISMATCH", `skill ${id} body has digest ${actual}, file says ${digest}`);
    }
  }
  const actual = skillSetRevision(entries);
  if (actual !== revision) {
    throw new SkillError("SKILL_REVISION_MISMATCH", `skill set revision is ${actual}, file says ${JSON.stringify(revision)}`);
  }
  return { revision, skills: entries.map(({ id, digest, body }) => ({ id, digest, body })) };
}
