import { accessSync, constants, statSync } from "node:fs";
import { delimiter, isAbsolute, join, resolve } from "node:path";

/**
 * Where `execvp` would find `file`: a name with a slash is taken relative to `cwd`, a bare name
 * is searched on `path`. The executable regular file, or undefined. A sandboxed command is
 * started by bwrap, whose failure to exec is only a line on stderr: looking first keeps the
 * `not_found` reply of an unsandboxed run.
 */
export function findProgram(file: string, path: string | undefined, cwd: string): string | undefined {
  const candidates = file.includes("/") ? [isAbsolute(file) ? file : resolve(cwd, file)] : (path ?? "").split(delimiter).filter(Boolean).map((dir) => join(resolve(cwd, dir), file));
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
