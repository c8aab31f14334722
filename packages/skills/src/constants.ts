/** The file that makes a directory a skill. */
export const SKILL_FILE_NAME = "SKILL.md";

/** The largest admitted SKILL.md, in bytes (C4); one byte more is `oversize`. */
export const MAX_SKILL_BYTES = 65_536;

/** The name of the materialized skill set handed to a worker with `--skills`. */
export const SKILLS_FILE_NAME = "skills.json";
