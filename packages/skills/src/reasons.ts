import type { RefusalReason } from "./types";

/**
 * The refusal reasons in precedence order: an entry reports the first that applies. `duplicate`
 * is last because it is decided across roots, after each entry's own verdict.
 */
export const REFUSAL_REASONS: readonly RefusalReason[] = [
  "symlink",
  "invalid_id",
  "missing_skill_md",
  "unreadable",
  "oversize",
  "non_utf8",
  "title_mismatch",
  "duplicate",
];
