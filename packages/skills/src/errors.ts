/** Every stable code a SkillError carries; Python (`klbr.skill_loader`) raises the same strings. */
export const SKILL_ERROR_CODES = [
  "SKILL_INVALID_ID",
  "SKILL_INVALID_DIGEST",
  "SKILL_DUPLICATE_ID",
  "SKILL_NOT_FOUND",
  "SKILL_CHANGED",
  "SKILL_ROOT_INVALID",
  "SKILLS_FILE_INVALID",
  "SKILL_DIGEST_MISMATCH",
  "SKILL_REVISION_MISMATCH",
] as const;

/** One of the stable skill error codes. */
export type SkillErrorCode = (typeof SKILL_ERROR_CODES)[number];

// A brand instead of instanceof alone, so two installed copies of this package still recognise each other.
const BRAND = Symbol.for("@klbr/skills/SkillError");

/** The one error class of @klbr/skills; `code` is stable, the message names the offending value. */
export class SkillError extends Error {
  /** The stable code, e.g. SKILL_NOT_FOUND. */
  readonly code: SkillErrorCode;

  constructor(code: SkillErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SkillError";
    this.code = code;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True for a SkillError, including one thrown by another installed copy of this package. */
export function isSkillError(value: unknown): value is SkillError {
  return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}
