/** The skill id rule (C4): a plain Python identifier segment, so `klbr.skills.<id>` imports. */
export const SKILL_ID_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;

/** True when `value` is a string that satisfies the skill id rule `^[a-z][a-z0-9_]{0,63}$`. */
export function isSkillId(value: unknown): value is string {
  return typeof value === "string" && SKILL_ID_PATTERN.test(value);
}
