import type { RefusedSkill, SkillRoot } from "./types";

const ROOTS: readonly SkillRoot[] = ["builtin", "managed"];

/**
 * The refusals as a reader sees them: one line per refused name, never the same line twice. A name
 * refused in one root reads `name: reason`. A name with entries in both roots reads once, each
 * reason with the roots it applies to (`goodone: duplicate: builtin and managed`); `duplicate` is
 * about both entries, so it names every root the name is in, whichever entry carries it.
 */
export function refusalLines(refused: ReadonlyArray<Pick<RefusedSkill, "name" | "root" | "reason">>): string[] {
  const byName = new Map<string, Array<Pick<RefusedSkill, "root" | "reason">>>();
  for (const r of refused) {
    const entries = byName.get(r.name) ?? [];
    entries.push(r);
    byName.set(r.name, entries);
  }
  const lines: string[] = [];
  for (const [name, entries] of byName) {
    if (entries.length === 1) {
      lines.push(`${name}: ${entries[0]!.reason}`);
      continue;
    }
    // Stryker disable next-line MethodExpression,ConditionalExpression,EqualityOperator: equivalent, a root never holds two entries of one name, so a name with two or more entries is in both roots
    const present = ROOTS.filter((root) => entries.some((e) => e.root === root));
    const rootsByReason = new Map<string, Set<SkillRoot>>();
    for (const e of entries) {
      const roots = rootsByReason.get(e.reason) ?? new Set<SkillRoot>();
      for (const root of e.reason === "duplicate" ? present : [e.root]) roots.add(root);
      rootsByReason.set(e.reason, roots);
    }
    const parts = [...rootsByReason].map(([reason, roots]) => `${reason}: ${ROOTS.filter((r) => roots.has(r)).join(" and ")}`);
    lines.push(`${name}: ${parts.join("; ")}`);
  }
  return lines;
}
