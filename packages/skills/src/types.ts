/** The two skill roots; their order is not precedence. */
export type SkillRoot = "builtin" | "managed";

/** Why a skill directory was not offered (C4 reason strings). */
export type RefusalReason =
  | "symlink"
  | "invalid_id"
  | "missing_skill_md"
  | "unreadable"
  | "oversize"
  | "non_utf8"
  | "title_mismatch"
  | "duplicate";

/** One admitted skill: its id, the SHA-256 hex of its SKILL.md bytes, its root and directory. */
export interface IndexedSkill {
  id: string;
  digest: string;
  root: SkillRoot;
  path: string;
}

/** One refused entry of a root: its directory-entry name, root, reason and path. */
export interface RefusedSkill {
  name: string;
  root: SkillRoot;
  reason: RefusalReason;
  path: string;
}

/** The result of indexing both roots: the set revision, admitted skills by id, refusals by name. */
export interface SkillIndex {
  revision: string;
  skills: IndexedSkill[];
  refused: RefusedSkill[];
}

/** An (id, digest) pair, the input of the set revision. */
export interface SkillDigestEntry {
  id: string;
  digest: string;
}

/** One skill body checked against its indexed digest. */
export interface LoadedSkill {
  id: string;
  digest: string;
  body: string;
}

/** The materialized set (`skills.json`, C4). */
export interface SkillsFile {
  revision: string;
  skills: LoadedSkill[];
}
