import { join } from "node:path";
import type { SkillRoots } from "./index-skills";

/**
 * The spec's default roots: builtin is `KLBR_SKILLS_DIR` when set and non-empty, else
 * `<workspace>/skills`; managed is `<data>/skills`.
 */
export function defaultSkillRoots(options: {
  workspace: string;
  data: string;
  env?: Record<string, string | undefined>;
}): SkillRoots {
  const configured = (options.env ?? process.env)["KLBR_SKILLS_DIR"];
  return {
    builtinDir: configured !== undefined && configured !== "" ? configured : join(options.workspace, "skills"),
    managedDir: join(options.data, "skills"),
  };
}
