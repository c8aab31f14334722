import { lstat, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { SkillCandidate } from "./assemble";
import { checkSkillBody } from "./body";
import { skillDigest } from "./digest";
import { SkillError } from "./errors";
import { isSkillId } from "./id";
import { readSkillFile } from "./read";
import type { SkillRoot } from "./types";

function errorCode(error: unknown): string | undefined {
  // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent, node:fs/promises always rejects with an Error object
  return typeof error === "object" && error !== null ? (error as NodeJS.ErrnoException).code : undefined;
}

/** Judge one directory entry of a root: the entry checks, then its SKILL.md checks. */
async function judgeEntry(root: SkillRoot, name: string, path: string, isSymlink: boolean): Promise<SkillCandidate> {
  const refuse = (reason: Exclude<SkillCandidate["verdict"], { ok: true }>["reason"]): SkillCandidate => ({
    name,
    root,
    path,
    verdict: { ok: false, reason },
  });
  if (isSymlink) return refuse("symlink");
  if (!isSkillId(name)) return refuse("invalid_id");
  const read = await readSkillFile(path);
  if (read.kind === "symlink") return refuse("symlink");
  if (read.kind === "missing") return refuse("missing_skill_md");
  if (read.kind === "unreadable") return refuse("unreadable");
  if (read.kind === "oversize") return refuse("oversize");
  const verdict = checkSkillBody(name, read.bytes);
  if (!verdict.ok) return refuse(verdict.reason);
  return { name, root, path, verdict: { ok: true, digest: skillDigest(read.bytes) } };
}

/**
 * The candidates of one root. An absent root has none. Directories and symlinks are candidates
 * (a symlink is refused as `symlink`, whatever it points to); regular files and other entries at
 * the root (a README.md, a .DS_Store) are ignored. The root itself may be reached through a symlink.
 */
export async function scanRoot(dir: string, root: SkillRoot): Promise<SkillCandidate[]> {
  try {
    const info = await stat(dir);
    if (!info.isDirectory()) {
      throw new SkillError("SKILL_ROOT_INVALID", `${root} skills root ${dir} is not a directory`);
    }
  } catch (error) {
    if (errorCode(error) === "ENOENT") return [];
    if (error instanceof SkillError) throw error;
    throw new SkillError("SKILL_ROOT_INVALID", `${root} skills root ${dir} cannot be read`, { cause: error });
  }
  const names = await readdir(Buffer.from(dir), { encoding: "buffer" }).catch((error: unknown) => {
    throw new SkillError("SKILL_ROOT_INVALID", `${root} skills root ${dir} cannot be listed`, { cause: error });
  });
  const candidates: SkillCandidate[] = [];
  for (const raw of names) {
    const name = raw.toString("utf8");
    const path = join(dir, name);
    // lstat through the raw bytes: a name that is not UTF-8 still has a type to report.
    const entry = await lstat(Buffer.concat([Buffer.from(dir), Buffer.from("/"), raw])).catch((error: unknown) => {
      if (errorCode(error) === "ENOENT") return undefined; // removed while we listed
      throw error;
    });
    if (entry === undefined) continue;
    if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
    candidates.push(await judgeEntry(root, name, path, entry.isSymbolicLink()));
  }
  return candidates;
}
