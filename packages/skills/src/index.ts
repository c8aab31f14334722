// @klbr/skills: the two-root skill index, refusals, load-by-digest and materialization (C4).

// Indexing and reading
export { indexSkills, type SkillRoots } from "./index-skills";
export { loadSkill } from "./load";
export { materializeSkills } from "./materialize";
export { defaultSkillRoots } from "./roots";

// Pure rules
export { isSkillId, SKILL_ID_PATTERN } from "./id";
export { skillDigest, isDigest } from "./digest";
export { skillSetRevision } from "./revision";
export { checkSkillBody, hasSkillTitle, skillTitleLine, type BodyVerdict } from "./body";
export { assembleIndex, type SkillCandidate } from "./assemble";
export { REFUSAL_REASONS } from "./reasons";
export { refusalLines } from "./refusal-lines";
export { encodeSkillsFile, parseSkillsFile } from "./skills-file";

// Constants
export { MAX_SKILL_BYTES, SKILL_FILE_NAME, SKILLS_FILE_NAME } from "./constants";

// Errors
export { SkillError, isSkillError, SKILL_ERROR_CODES, type SkillErrorCode } from "./errors";

// Types
export type {
  IndexedSkill,
  LoadedSkill,
  RefusalReason,
  RefusedSkill,
  SkillDigestEntry,
  SkillIndex,
  SkillRoot,
  SkillsFile,
} from "./types";
