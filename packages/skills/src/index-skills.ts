import { stat } from "node:fs/promises";
import { assembleIndex } from "./assemble";
import { SkillError } from "./errors";
import { scanRoot } from "./scan";
import type { SkillIndex } from "./types";

/** Where the two roots are; either may be absent on disk (absent means empty). */
export interface SkillRoots {
  builtinDir: string;
  managedDir: string;
}

async function identity(dir: string): Promise<string | undefined> {
  const info = await stat(dir).catch(() => undefined);
  return info?.isDirectory() ? `${info.dev}:${info.ino}` : undefined;
}

/**
 * Index both roots into one namespace: admitted skills sorted by id with their digests, every
 * refused entry with its reason, and the set revision (C4). Root order is not precedence.
 * Two roots that are one directory are SKILL_ROOT_INVALID (else every skill would be a duplicate).
 */
export async function indexSkills({ builtinDir, managedDir }: SkillRoots): Promise<SkillIndex> {
  const [builtinId, managedId] = await Promise.all([identity(builtinDir), identity(managedDir)]);
  if (builtinId !== undefined && builtinId === managedId) {
    throw new SkillError("SKILL_ROOT_INVALID", `builtin root ${builtinDir} and managed root ${managedDir} are the same directory`);
  }
  const builtin = await scanRoot(builtinDir, "builtin");
  const managed = await scanRoot(managedDir, "managed");
  return assembleIndex([...builtin, ...managed]);
}
