import { isSkillId } from "./id";
import { skillSetRevision } from "./revision";
import type { IndexedSkill, RefusalReason, RefusedSkill, SkillIndex, SkillRoot } from "./types";

/** One candidate entry of a root with its own verdict, before the cross-root duplicate rule. */
export interface SkillCandidate {
  name: string;
  root: SkillRoot;
  path: string;
  verdict: { ok: true; digest: string } | { ok: false; reason: Exclude<RefusalReason, "duplicate"> };
}

function byUtf8(a: string, b: string): number {
  // Stryker disable next-line StringLiteral: equivalent, an empty encoding name is read as utf8
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

const ROOT_ORDER: Record<SkillRoot, number> = { builtin: 0, managed: 1 };

/**
 * Join the candidates of both roots into one index. A valid id named by a candidate in both
 * roots is contested: neither root wins, each entry reports its own reason if it has one and
 * `duplicate` otherwise. Skills sort by id, refusals by name (UTF-8 bytes) then root.
 */
export function assembleIndex(candidates: readonly SkillCandidate[]): SkillIndex {
  const rootsByName = new Map<string, Set<SkillRoot>>();
  for (const { name, root } of candidates) {
    // Stryker disable next-line ConditionalExpression: equivalent, an invalid id never has an ok verdict, so counting its roots changes no entry
    if (!isSkillId(name)) continue;
    const roots = rootsByName.get(name) ?? new Set<SkillRoot>();
    roots.add(root);
    rootsByName.set(name, roots);
  }
  const skills: IndexedSkill[] = [];
  const refused: RefusedSkill[] = [];
  for (const { name, root, path, verdict } of candidates) {
    if (!verdict.ok) {
      refused.push({ name, root, reason: verdict.reason, path });
    } else if ((rootsByName.get(name)?.size ?? 0) > 1) {
      refused.push({ name, root, reason: "duplicate", path });
    } else {
      skills.push({ id: name, digest: verdict.digest, root, path });
    }
  }
  skills.sort((a, b) => byUtf8(a.id, b.id));
  refused.sort((a, b) => byUtf8(a.name, b.name) || ROOT_ORDER[a.root] - ROOT_ORDER[b.root]);
  return { revision: skillSetRevision(skills), skills, refused };
}
