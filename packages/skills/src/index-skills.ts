import { assembleIndex } from "./assemble";
import { scanRoot } from "./scan";
import type { SkillIndex } from "./types";

/** Where the two roots are; either may be absent on disk (absent means empty). */
export interface SkillRoots {
  builtinDir: string;
  managedDir: string;
}

/**
 * Index both roots into one namespace: admitted skills sorted by id with their digests, every
 * refused entry with its reason, and the set revision (C4). Root order is not precedence.
 */
export async function indexSkills({ builtinDir, managedDir }: SkillRoots): Promise<SkillIndex> {
  const builtin = await scanRoot(builtinDir, "builtin");
  const managed = await scanRoot(managedDir, "managed");
  return assembleIndex([...builtin, ...managed]);
}
